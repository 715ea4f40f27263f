#!/bin/bash
# Call 1 on one H200, the session's first: the GPU regression study against the accepted baseline,
# then VGG-16 in `train` beside torch.compile of torchvision's vgg16 in the same call (owed by the
# previous session: its compile was not reached), fp16 batch 512 and bf16 batch 256.
# Run from the repository root: B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())" | tee "$OUT/raw/torch.txt"
echo "== regression study against the accepted baseline"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"
cp "$OUT/raw/gr/records.jsonl.gz" "$OUT/regression-records.jsonl.gz" 2>/dev/null

nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 &
dmon=$!
for pb in fp16:512 bf16:256; do
  p=${pb%:*} b=${pb#*:}
  echo "== vgg16 $p batch $b: ours"; start=$SECONDS
  timeout 120 $B mpirun -np 1 scalebench-run train -p model=vgg16 -p precision=$p -p batch=$b --emit records \
    >> "$OUT/raw/vgg16.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "rc=$? in $((SECONDS - start)) s"
  echo "== vgg16 $p batch $b: torch.compile"; start=$SECONDS
  timeout 200 python3 examples/pytorch/ddp_train.py --model vgg16 --precision $p --batch $b --steps 20 \
    > "$OUT/raw/torch-compile-$p.txt" 2>&1
  echo "rc=$? in $((SECONDS - start)) s"; grep -E "images/s|step_ms|graphs" "$OUT/raw/torch-compile-$p.txt"
done
python3 scripts/record-summary.py "$OUT/raw/vgg16.jsonl" --details bias_relu_fused
kill $dmon
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
