#!/bin/bash
# Call 4 on 2 x H200, the session's last (a call before it unpacked Fashion-MNIST on the machine).
# Phase A, side by side. GPU 0: the regression study (the session's end), then the infer
# workload's Server search with three batching set-ups (ResNet-50 fp16; the last one reached
# 0.51x Offline with batches up to 128 and a 2 ms timeout on 2 streams). GPU 1: the quantized
# convolution graph's first GPU run (its tests against a double reference, then conv's int8 and
# fp8e4m3 precisions on two ResNet-50 shapes and on all of them beside fp16), then NASNet fp16 with
# the graph API's convolutions (conv_api=graph). Phase B, both GPUs: NASNet's table rows
# (nasnet-table.yaml). Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv > "$OUT/raw/gpu.txt"
ls /usr/share/datasets/fashion-mnist > "$OUT/raw/fmnist-files.txt" 2>&1
echo "== phase A"
(
  export CUDA_VISIBLE_DEVICES=0
  start=$SECONDS
  timeout 150 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz \
    --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
  echo "gpu-regression rc=$? in $((SECONDS - start)) s"
  for cfg in "256 4 2" "256 2 3" "128 2 4"; do
    set -- $cfg
    t0=$SECONDS
    timeout 75 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
      -p precision=fp16 -p scenario=server -p target_qps=0 -p max_batch=$1 -p batch_timeout_ms=$2 -p streams=$3 \
      -p min_duration_s=4 -p search_trials=5 -p search_tolerance=0.1 > "$OUT/raw/server-b$1-t$2-s$3.jsonl" 2>&1
    echo "server search max_batch $1 timeout $2 ms streams $3: rc=$? in $((SECONDS - t0)) s"
  done
) > "$OUT/raw/gpu0.txt" 2>&1 &
gpu0=$!
export CUDA_VISIBLE_DEVICES=1
start=$SECONDS
timeout 120 $B scalebench-unit-tests --gtest_filter='*QuantConvGraphGpu*:Quant*' > "$OUT/raw/unit-quant.txt" 2>&1
echo "quantized GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|what\(\)|refus" "$OUT/raw/unit-quant.txt" | head -20 | cut -c1-300
conv() {  # tag seconds params...
  local t0=$SECONDS
  timeout $2 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run conv "${@:3}" > "$OUT/raw/conv-$1.txt" 2>&1
  echo "conv $1 rc=$? in $((SECONDS - t0)) s"; grep -iE "error|refus" "$OUT/raw/conv-$1.txt" | head -3 | cut -c1-300
  tail -n 25 "$OUT/raw/conv-$1.txt" | cut -c1-220
}
conv quick 60 -p shapes=256x64x1x1@56x56,64x64x3x3@56x56:p1 -p precision=int8,fp8e4m3 -p pass=fwd -p plans=2
conv resnet50 120 -p precision=fp16,int8,fp8e4m3 -p pass=fwd
t0=$SECONDS
timeout 120 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=fp16 -p batch=512 -p warmup=5 -p steps=5 \
  -p conv_api=graph --repetitions 5 --emit records > "$OUT/raw/ours-fp16-graph.jsonl" 2> "$OUT/raw/ours-fp16-graph.err"
echo "nasnet fp16 conv_api=graph rc=$? in $((SECONDS - t0)) s"
python3 scripts/record-summary.py --details step_ms,graph_plans_tried,graph_api_skipped_convs,profile.by_op_ms "$OUT/raw/ours-fp16-graph.jsonl"
wait $gpu0
cat "$OUT/raw/gpu0.txt"
grep -E "REFERENCE FAILED|records are not ok|regress|missing|^gpu-regression" "$OUT/raw/gr.txt" | tail -6
for f in "$OUT"/raw/server-*.jsonl; do
  echo "-- $(basename "$f")"; python3 scripts/record-summary.py --details verdict,queries_per_second,latency_ms.p99,search.trials "$f"
done
unset CUDA_VISIBLE_DEVICES
echo "== phase B ($SECONDS s): NASNet's table rows"
start=$SECONDS
timeout $((580 - SECONDS)) $B scalebench study "$D/nasnet-table.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"; grep -E "^\[[0-9]" "$OUT/raw/study.txt" | cut -c1-200
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl" 2>/dev/null
$B scalebench report --db "$OUT/raw/study.db" --out "$OUT/raw/report" > /dev/null 2>&1
sed -n '/Training table/,/^$/p' "$OUT/raw/report/report.md" | head -12
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
