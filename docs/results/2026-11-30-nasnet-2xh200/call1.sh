#!/bin/bash
# Call 1 on 2 x H200: the regression study on GPU 0 (the session's start); the GPU tests of the
# train kernels and the executor (split last session, not yet run; the finite-difference check now
# tries three steps) and of gpt's pipeline; the cost-balanced pipeline stages
# (2026-11-30-pp-2xh200/call3.sh); then NASNet-A Mobile's rows of the tf_cnn table as a study
# (nasnet-table.yaml: fp16 512 and fp32 256 per GPU, 1 and 2 GPUs, NVLink against PCIe) and its
# fp16 inference. Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m > "$OUT/raw/topo.txt"
echo "== GPU regression study, GPU 0"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 120 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|records are not ok|regress|^gpu-regression" "$OUT/raw/gr.txt" | tail -8
echo "== GPU tests: train, gpt pipeline"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 110 $B scalebench-unit-tests --gtest_filter='Train*:DirectionalCheck*:GptGpuPp*:GptPp*:PipelineSchedule*' \
  > "$OUT/raw/unit.txt" 2>&1
echo "unit rc=$? in $((SECONDS - start)) s"
grep -E "^\[  PASSED|^\[  FAILED|tests ran" "$OUT/raw/unit.txt" | head -20
echo "== pipeline stages balanced by cost"; start=$SECONDS
OUT="$OUT/pp" bash -c 'mkdir -p "$OUT"; bash docs/results/2026-11-30-pp-2xh200/call3.sh'
echo "pp rc=$? in $((SECONDS - start)) s"
echo "== NASNet fp16 inference, one GPU"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 60 $B mpirun -np 1 scalebench-run train -p model=nasnet -p mode=inference -p precision=fp16 \
  -p batch=512 -p warmup=5 -p steps=5 --repetitions 5 --emit records > "$OUT/raw/infer.jsonl" 2> "$OUT/raw/infer.err"
echo "inference rc=$? in $((SECONDS - start)) s"; tail -3 "$OUT/raw/infer.err"
echo "== NASNet table study"; start=$SECONDS
left=$((570 - SECONDS))
timeout $left $B scalebench study "$D/nasnet-table.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -E "^\[[0-9]" "$OUT/raw/study.txt" | cut -c1-200 | tail -8
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl" 2>/dev/null
$B scalebench report --db "$OUT/raw/study.db" --out "$OUT/raw/report" > /dev/null 2>&1
sed -n '/Training table/,/^$/p' "$OUT/raw/report/report.md" | head -12
python3 "$D/summarise.py" "$OUT/raw/infer.jsonl" "$OUT/raw/records.jsonl"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
