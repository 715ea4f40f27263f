#!/bin/bash
# Call 2 on one H200, the session's last: VGG-16 in `train` (never run on a GPU before) at
# tf_cnn_benchmarks' batch sizes (fp16 512, fp32 256) and bf16 256, beside torchvision's vgg16 in
# PyTorch, eager and torch.compile, in the same call; then the closing GPU regression study against
# the accepted baseline. Run from the repository root: B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 &
dmon=$!
run() { timeout "$1" $B mpirun -np 1 scalebench-run "${@:2}"; }

echo "== vgg16, ours"
for pb in fp16:512 fp32:256 bf16:256; do
  start=$SECONDS
  run 120 train -p model=vgg16 -p precision=${pb%:*} -p batch=${pb#*:} --emit records \
    >> "$OUT/raw/vgg16.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "vgg16 $pb rc=$? in $((SECONDS - start)) s"
done
python3 - "$OUT/raw/vgg16.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    i = line.find("{")
    if i < 0: continue
    try: r = json.loads(line[i:])
    except ValueError: continue
    st = r.get("stats") or {}
    print(r.get("params", {}).get("model"), json.dumps(r.get("point")), r.get("metric"), r.get("unit"),
          "median", st.get("median"), "cv", round(st.get("cv") or 0, 4), "n", st.get("n"),
          "correct", (r.get("correctness") or {}).get("passed"), r.get("status"), r.get("reason"))
PY

echo "== vgg16, PyTorch eager"
for pb in fp16:512 fp32:256 bf16:256; do
  timeout 90 python3 examples/pytorch/ddp_train.py --model vgg16 --precision ${pb%:*} --batch ${pb#*:} --steps 20 --compile none \
    > "$OUT/raw/torch-eager-${pb%:*}.txt" 2>&1; echo "eager $pb rc=$?"; grep -E "images/s:|step_ms" "$OUT/raw/torch-eager-${pb%:*}.txt"
done
echo "== vgg16, PyTorch torch.compile (fp16 512, then bf16 256 while time is left)"
for pb in fp16:512 bf16:256; do
  left=$((330 - SECONDS)); (( left > 60 )) || { echo "no time left for compiled $pb"; break; }
  timeout $left python3 examples/pytorch/ddp_train.py --model vgg16 --precision ${pb%:*} --batch ${pb#*:} --steps 20 \
    > "$OUT/raw/torch-compile-${pb%:*}.txt" 2>&1; echo "compile $pb rc=$? at $SECONDS s"; grep -E "images/s:|step_ms|setup|warmup" "$OUT/raw/torch-compile-${pb%:*}.txt"
done
echo "== regression study against the accepted baseline"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"

kill $dmon
cp "$OUT/raw/gr/records.jsonl.gz" "$OUT/regression-records.jsonl.gz" 2>/dev/null
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
