#!/bin/bash
# Call 2 on 2 x H200: are scalebench's first gradients right? Each tiny model (tiny, tiny-inception,
# tiny-nasnet, fmnist-resnet) and NASNet itself dumped in fp32 from the same seed, then
# (1) scripts/reference-gradients.py: the dumped graph's loss and gradients recomputed in float64
# with numpy, tensor by tensor (no PyTorch); (2) the NASNet PyTorch peer from the same weights,
# now contiguous (NCHW) because PyTorch's channels_last avg_pool2d backward is wrong with padding
# (pytorch/pytorch#188344; call 1 compared against channels_last). Run from the repository root
# with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
python3 -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)" \
  | tee "$OUT/raw/versions.txt"
dump() {  # gpu tag model batch [params...]
  local t0=$SECONDS dir="$OUT/raw/dump-$2"
  CUDA_VISIBLE_DEVICES=$1 timeout 60 $B mpirun -np 1 scalebench-run train -p model=$3 -p precision=fp32 -p batch=$4 \
    -p dump="$dir" -p dump_steps=3 "${@:5}" -p warmup=1 -p steps=1 --repetitions 3 --emit records \
    > "$OUT/raw/same-$2.jsonl" 2> "$OUT/raw/same-$2.err"
  echo "dump $2 rc=$? in $((SECONDS - t0)) s"
}
reference() {  # tag batch
  timeout 120 python3 scripts/reference-gradients.py "$OUT/raw/dump-$1/fp32-b$2" > "$OUT/raw/reference-$1.txt" 2>&1
  echo "reference $1 rc=$?: $(head -1 "$OUT/raw/reference-$1.txt")"; tail -1 "$OUT/raw/reference-$1.txt"
}
(dump 1 tiny tiny 8 && dump 1 tiny-inception tiny-inception 8 && dump 1 fmnist-resnet fmnist-resnet 8) &
dump 0 tiny-nasnet tiny-nasnet 8 -p algo=heuristic
dump 0 nasnet nasnet 32 -p algo=heuristic
dump 0 nasnet-search nasnet 32
wait
for t in tiny tiny-inception fmnist-resnet tiny-nasnet; do reference $t 8; done
for t in tiny-nasnet:8 nasnet:32 nasnet-search:32; do
  CUDA_VISIBLE_DEVICES=0 timeout 90 python3 examples/pytorch/nasnet_mobile.py --check "$OUT/raw/dump-${t%:*}/fp32-b${t#*:}" \
    --every-tensor > "$OUT/raw/check-${t%:*}.txt" 2>&1
  echo "peer check ${t%:*} rc=$?"; grep -E "median relative|^step|^(PASS|FAIL)" "$OUT/raw/check-${t%:*}.txt"
done
find "$OUT/raw" -name '*.f32' -size +1M -delete; find "$OUT/raw" -name 'images.bin' -size +1M -delete
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
