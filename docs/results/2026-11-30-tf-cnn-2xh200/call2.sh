#!/bin/bash
# Call 2 (GPU 0 of the 2 x H200 machine): issue 46's one-GPU goal, scalebench's `train` against
# torch.compile at the document's fp16 batch of 512: ResNet-152 and VGG-16 (never compared
# before), then Inception v3 with the peer's CUDA-graph mode (reduce-overhead), which the last
# comparison left untried. Each network: scalebench-run first, then the peer
# (examples/pytorch/ddp_train.py: channels_last, fp16 autocast with a GradScaler, fused SGD, model
# and loss compiled as one graph), back to back on the same GPU. Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())" | tee "$OUT/raw/torch.txt"
deadline=540
ours() {  # model
  local start=$SECONDS left=$((deadline - SECONDS))
  (( left > 30 )) || { echo "$1 scalebench: no time left"; return; }
  timeout $((left < 90 ? left : 90)) $B mpirun -np 1 scalebench-run train -p model=$1 -p precision=fp16 -p batch=512 \
    -p warmup=5 -p steps=5 --repetitions 5 --emit records > "$OUT/raw/ours-$1.jsonl" 2> "$OUT/raw/ours-$1.err"
  echo "$1 scalebench rc=$? in $((SECONDS - start)) s"
  python3 - "$OUT/raw/ours-$1.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    i = line.find("{")
    if i < 0: continue
    try: r = json.loads(line[i:])
    except ValueError: continue
    if r.get("metric") == "throughput":
        st = r.get("stats") or {}
        print("  images/s median", round(st.get("median", 0), 1), "cv", round(st.get("cv") or 0, 4), "n", st.get("n"),
              "check", (r.get("correctness") or {}).get("passed"), r.get("status"))
PY
}
peer() {  # model mode
  local start=$SECONDS left=$((deadline - SECONDS))
  (( left > 60 )) || { echo "$1 peer $2: no time left"; return; }
  timeout $((left < 200 ? left : 200)) python3 examples/pytorch/ddp_train.py --model $1 --batch 512 --precision fp16 \
    --steps 20 --warmup 10 --compile model --compile-mode $2 > "$OUT/raw/peer-$1-$2.txt" 2>&1
  echo "$1 peer $2 rc=$? in $((SECONDS - start)) s"
  grep -E "^(images/s|step_ms|setup|warmup_s)" "$OUT/raw/peer-$1-$2.txt" | sed 's/^/  /'
}
for m in resnet152 vgg16; do
  ours $m; peer $m default
done
ours inception3; peer inception_v3 reduce-overhead
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
