#!/bin/bash
# Call 4 on 2 x H200, the session's end: the GPU regression study on GPU 0 (Fashion-MNIST unpacked
# by the call before), then NASNet-A Mobile's rows of the tf_cnn table (nasnet-table.yaml, as in
# 2026-11-30-nasnet-fp16-2xh200 call 4) with this session's aligned weights and depthwise kernels:
# fp16 512 and fp32 256 per GPU, 1 and 2 GPUs, NVLink against PCIe, as a study with its report.
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
here=docs/results/2026-11-30-nasnet-aligned-2xh200
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m > "$OUT/raw/topo.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "^(regressed|improved|missing|new) |[0-9]+ regressions|gpu-regression:" "$OUT/raw/gr.txt" | cut -c1-200 | tail -40
echo "== NASNet's table rows"; start=$SECONDS
timeout 300 $B scalebench study docs/results/2026-11-30-nasnet-fp16-2xh200/nasnet-table.yaml --db "$OUT/raw/nasnet.db" --logs "$OUT/raw/logs" \
  > "$OUT/raw/nasnet-study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -v -E "^\s*$" "$OUT/raw/nasnet-study.txt" | tail -8 | cut -c1-200
$B scalebench results --db "$OUT/raw/nasnet.db" --format json > "$OUT/raw/nasnet.jsonl" 2>/dev/null
$B scalebench report --db "$OUT/raw/nasnet.db" --out "$OUT/raw/report" > /dev/null 2>&1
sed -n '/Training table/,/^## /p' "$OUT/raw/report/report.md" 2>/dev/null | grep "^|" | head -8
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
