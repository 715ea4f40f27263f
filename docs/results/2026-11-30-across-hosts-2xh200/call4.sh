#!/bin/bash
# Call 4 on 2 x H200 (issue 46): allreduce-tuning.yaml, train's all-reduce settings for VGG-16 and
# Inception v3 at 2 GPUs over NVLink, checks off (Inception's tiny-net gradient check fails, see
# the README); then the GPU regression study again (GPU 0), the session's last device run. Same
# bundle as calls 1-3 (d1cd8d9). Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
echo "== all-reduce settings"; start=$SECONDS
timeout 440 $B scalebench study "$D/allreduce-tuning.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -E "throughput_total|^run |nvlink +1 " "$OUT/raw/study.txt" | tail -14
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl"
python3 - "$OUT/raw/records.jsonl" <<'PY'
import json, sys
base, two = {}, []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("status") != "ok": continue
    m = r["params"]["model"]
    if r["placement"]["gpus"] == 1 and r["metric"] == "throughput": base[m] = r["value"]
    if r["placement"]["gpus"] == 2 and r["metric"] == "throughput_total": two.append((m, r["variant"], r["value"], r["stats"]["cv"]))
print("model | variant | 2-GPU img/s (cv) | efficiency")
for m, v, x, cv in sorted(two):
    print(f"{m} | {v} | {x:.1f} ({cv:.2%}) | {x / (2 * base[m]):.2%}" if m in base else f"{m} | {v} | {x:.1f} | -")
print("1 GPU:", {m: round(x, 1) for m, x in base.items()})
PY
echo "== regression study against the accepted baseline (GPU 0)"; start=$SECONDS
# The study file as of the bundle's commit (its collective and copy still say time_cap_s), carried
# beside the bundle: `git show d1cd8d9:examples/gpu-regression.yaml`.
CUDA_VISIBLE_DEVICES=0 timeout 140 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --study .gpu-carry/gpu-regression-d1cd8d9.yaml --out "$OUT/raw/gr-last" > "$OUT/raw/gr-last.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok|regressions," "$OUT/raw/gr-last.txt" | cut -c1-120
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
