#!/bin/bash
# A fresh H200 after call0.sh a, then b (../2026-12-01-server-buckets-h200), with the unquantized
# graphs on cuDNN's heuristic's first plan (call 2): the quantized net's GPU tests (the mixed nets
# against the fp16 net), ResNet-50 Offline at batch 256 on 3 streams in fp16, int8 and fp8e4m3
# with the split timed (the default), int8 with 2 convolutions in fp16 beside it, each with its
# batching check; then the GPU regression study at the session's end. Run from the repository
# root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
timeout 80 $B session-gpu-tests --gtest_filter='QuantNetGpu.*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|in fp16:|exception" "$RAW/unit.txt" | cut -c1-600 | head -40
echo "== ResNet-50 Offline, batch 256, 3 streams"
for p in fp16:auto:40 int8:auto:100 fp8e4m3:auto:120 int8:2:60; do
  IFS=: read -r prec split limit <<< "$p"
  start=$SECONDS
  timeout $limit $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=$prec -p fp16_convolutions=$split -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 \
    > "$RAW/offline-$prec-$split.jsonl" 2>&1
  echo "$prec fp16_convolutions=$split rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details samples_per_second,check.max_error_x_spread,check.top1_agree,engine.build_s,engine.quantization.split.trained_convolutions,engine.quantization.convolutions_us "$RAW/offline-$prec-$split.jsonl" | tail -1 | cut -c1-700
done
echo "== regression study"; start=$SECONDS
timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-12-01-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
