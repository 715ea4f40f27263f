#!/bin/bash
# Call 1 on one H200: the GPU regression study on the programs of the nasnet branch (its train
# kernels for narrow channels changed batch norm, pools and concatenation for every network),
# then run.sh (NASNet's GPU tests, same-weights checks against PyTorch, training and inference
# throughput, the PyTorch peer) within what is left. Run from the repository root with B = the
# bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
echo "== GPU regression study"; start=$SECONDS
timeout 120 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|records are not ok|^[0-9]+ regressions|^gpu-regression" "$OUT/raw/gr.txt" | grep -v "^0 regressions, 0 missing, [0-9]* unchanged, 0 improvements" | tail -12
tar -C "$OUT" -czf "$OUT/gr-raw.tar.gz" raw && rm -rf "$OUT/raw"
deadline=400 bash "$D/run.sh"
