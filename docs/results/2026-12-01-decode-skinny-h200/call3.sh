#!/bin/bash
# Call 3 on one H200 (programs at the commit the README names; Fashion-MNIST unpacked by the calls
# before): the decoder's GPU tests (attention reading 16 bytes a lane, its keys split over several
# blocks; the skinny linear layer with several warps an output), greedy decoding timed, each
# kernel of a decode step timed by Nsight Compute (gpu__time_duration, clocks left alone), the
# PyTorch peer at the same shapes, one after the other, and the GPU regression study at the end.
# Run from the repository root with B = the bundle's env.sh and $OUT set; raw output in
# $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B decode-gpu-tests \
  --gtest_filter='DecodeAttentionGpu.*:SkinnyLinearGpu.*:GptDecoderGpu.*:BothFamilies/GptDecoderFamilyGpu.*:GptGpu.GradientCheckAgainstFp64' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|sample" "$RAW/unit.txt" | head -60
echo "== decode (ours)"; start=$SECONDS
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1" "gpt2-1558m 64"; do
  set -- $shape
  CUDA_VISIBLE_DEVICES=0 timeout 60 $B scalebench-gpt-check decode $1 $2 128 256 5 >> "$RAW/decode.jsonl" 2>> "$RAW/decode.err"
  echo "$1 batch $2 rc=$?"
done
echo "decode in $((SECONDS - start)) s"
python3 -c "
import json
for l in open('$RAW/decode.jsonl'):
    r = json.loads(l); print(r['decode'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'prefill ms', round(r['prefill_ms']['median'], 2))
    print('  profile ms:', {k: round(v, 4) for k, v in sorted(r['profile_ms'].items(), key=lambda kv: -kv[1])})
"
tail -3 "$RAW/decode.err"
echo "== kernels of a decode step (Nsight Compute)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1"; do
  set -- $shape; start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 60 $B $NCU --clock-control none --metrics gpu__time_duration.sum --csv \
    .gpu-bundle/bin/scalebench-gpt-check decode $1 $2 128 4 2 > "$RAW/ncu-$1-$2.csv" 2> "$RAW/ncu-$1-$2.err"
  echo "ncu $1 batch $2 rc=$? in $((SECONDS - start)) s"
  python3 - "$RAW/ncu-$1-$2.csv" <<'PY'
import csv, io, re, sys
text = open(sys.argv[1]).read()
rows = [r for r in csv.DictReader(io.StringIO(text[text.find('"ID"'):])) if r.get("Metric Name") == "gpu__time_duration.sum"]
names = [r["Kernel Name"] for r in rows]
# The last decode step is the profile step: from the last decode_rows kernel on.
last = max(i for i, n in enumerate(names) if "decode_rows" in n)
step = rows[last:]
def short(n):
    n = re.sub(r"\(.*", "", n)
    return re.sub(r"^.*::", "", n)[:60]
total, by = 0.0, {}
for r in step:
    us = float(r["Metric Value"]) / 1e3
    total += us
    k = short(r["Kernel Name"])
    c, t = by.get(k, (0, 0.0))
    by[k] = (c + 1, t + us)
print("  %d kernels, %.1f us of kernel time in the profiled step" % (len(step), total))
for k, (c, t) in sorted(by.items(), key=lambda kv: -kv[1][1]):
    print("  %-60s %4d x %8.2f us = %8.1f us" % (k, c, t / c, t))
PY
done
echo "== decode (PyTorch peer)"
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1"; do
  set -- $shape; start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 240 python3 examples/pytorch/gpt_decode.py --model $1 --batch $2 --prompt 128 --new 256 \
    >> "$RAW/peer.jsonl" 2>> "$RAW/peer.err"
  echo "peer $1 batch $2 rc=$? in $((SECONDS - start)) s"
done
python3 -c "
import json
for l in open('$RAW/peer.jsonl'):
    r = json.loads(l); print(r['model'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'cache', r.get('cache_positions'))
"
tail -3 "$RAW/peer.err"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED" "$RAW/gr.txt" | cut -c1-120 | tail -20
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
