#!/bin/bash
# Call 1 on 2 x H200: the GPU regression study on GPU 0 against the accepted baseline (the
# session's start), then the fp32 rows of tf_cnn_benchmarks' table (fp32-table.yaml: five
# networks, batch 256 per GPU, 1 and 2 GPUs, NVLink against PCIe) as a study with its report.
# Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw" /usr/share/datasets/fashion-mnist
# Fashion-MNIST (the study's time-to-accuracy point) when it was carried: this call's bundle and
# the tree left no room for it, so that point fails here.
[[ -f .gpu-carry/fmnist.tar.xz ]] && tar -xJf .gpu-carry/fmnist.tar.xz -C /usr/share/datasets/fashion-mnist
# Which of the bundle's libraries this machine has already (the next bundle can leave them out).
for f in .gpu-bundle/lib/*; do n=$(basename "$f"); ldconfig -p | grep -q " $n " && echo "has $n"; done > "$OUT/raw/libs-present.txt"
echo "libraries of the bundle present here: $(wc -l < "$OUT/raw/libs-present.txt") of $(ls .gpu-bundle/lib | wc -l)"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m | tee "$OUT/raw/topo.txt"
echo "== GPU regression study, GPU 0"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|records are not ok|regress|^gpu-regression" "$OUT/raw/gr.txt" | tail -12
echo "== fp32 table study"; start=$SECONDS
timeout 400 $B scalebench study "$D/fp32-table.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -E "^\[|elapsed" "$OUT/raw/study.txt" | tail -16
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl" 2>/dev/null
$B scalebench report --db "$OUT/raw/study.db" --out "$OUT/raw/report" > /dev/null 2>&1
sed -n '/Training table/,/^$/p' "$OUT/raw/report/report.md" | head -20
$B scalebench ratio --db "$OUT/raw/study.db" --metric throughput 2>&1 | tail -8
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
