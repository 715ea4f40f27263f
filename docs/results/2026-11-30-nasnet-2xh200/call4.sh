#!/bin/bash
# Call 4 on 2 x H200, the session's last: the regression study on GPU 0 (the session's end) while
# GPU 1 runs NASNet fp16 again (the fc matmul now tries cuBLASLt's candidates in order, after
# call 3's run still failed at launch with the weights staged aligned) with its same-weights check,
# and the infer workload's Server search again (a trial now judged by its latency bound alone);
# then NASNet's fp16 row at 1 and 2 GPUs. Run from the repository root with B and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
echo "== GPU regression study, GPU 0 (beside NASNet and infer on GPU 1)"; start=$SECONDS
(CUDA_VISIBLE_DEVICES=0 timeout 120 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
 echo "gpu-regression rc=$? in $((SECONDS - start)) s") &
guard=$!
export CUDA_VISIBLE_DEVICES=1
timeout 60 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=fp16 -p batch=512 -p warmup=5 -p steps=5 \
  --repetitions 5 --emit records > "$OUT/raw/ours-fp16.jsonl" 2> "$OUT/raw/ours-fp16.err"
echo "nasnet fp16 b512 rc=$? in $((SECONDS - start)) s"; grep -i "error\|refused" "$OUT/raw/ours-fp16.err" | head -3 | cut -c1-300
dir="$OUT/raw/dump-fp16"
timeout 60 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=fp16 -p batch=64 -p dump="$dir" \
  -p dump_steps=5 -p warmup=1 -p steps=1 --repetitions 3 --emit records > "$OUT/raw/same-fp16.jsonl" 2>> "$OUT/raw/errs.txt"
echo "dump fp16 rc=$?"
timeout 60 python3 examples/pytorch/nasnet_mobile.py --check "$dir/fp16-b64" 2>&1 | tail -7
timeout 60 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
  -p precision=fp16 -p scenario=server -p target_qps=0 -p max_batch=128 -p min_duration_s=4 -p search_trials=6 \
  -p search_tolerance=0.1 > "$OUT/raw/server_search.jsonl" 2> "$OUT/raw/server_search.err"
echo "server search rc=$?"
python3 - "$OUT/raw/server_search.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); d = r.get("details") or {}
    print(" ", r.get("status"), r.get("value"), r.get("unit"), d.get("verdict"), d.get("reasons"))
    for t in (d.get("search") or {}).get("trials", []):
        print("    trial %.1f queries/s within_bound %s p99 %.3f ms" % (t["qps"], t.get("within_bound"), t.get("p99_ms", 0)))
PY
wait $guard
grep -E "REFERENCE FAILED|records are not ok|regress|^gpu-regression" "$OUT/raw/gr.txt" | tail -8
unset CUDA_VISIBLE_DEVICES
echo "== NASNet fp16 row"; start=$SECONDS
timeout 200 $B scalebench study "$D/nasnet-fp16-table.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"; grep -E "^\[[0-9]" "$OUT/raw/study.txt" | cut -c1-200
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl" 2>/dev/null
$B scalebench report --db "$OUT/raw/study.db" --out "$OUT/raw/report" > /dev/null 2>&1
sed -n '/Training table/,/^$/p' "$OUT/raw/report/report.md" | head -12
python3 "$D/summarise.py" "$OUT/raw/ours-fp16.jsonl" "$OUT/raw/same-fp16.jsonl" "$OUT/raw/records.jsonl"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" --exclude='weights.f32' --exclude='images.bin' --exclude='labels.i32' \
  --exclude='grads?.f32' raw && rm -rf "$OUT/raw"
