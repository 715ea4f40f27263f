#!/bin/bash
# Call 2 (GPU 0 of the 2 x H200 machine): the GPU regression study with the pp branch's
# scalebench-run (its gpt changes: placement, layouts, norm ranges by name), the session's last.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 110 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|records are not ok|^[0-9]+ regressions|^gpu-regression" "$OUT/raw/gr.txt" | grep -v "^0 regressions, 0 missing, [0-9]* unchanged, 0 improvements" | tail -12
tar -C "$OUT" -czf "$OUT/gr-raw.tar.gz" raw && rm -rf "$OUT/raw"
