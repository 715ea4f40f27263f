#!/bin/bash
# A fresh H200, after call 1 found the all-fp16 engine (fp16_convolutions=53) failing its batching
# check (16 of 16 samples alone answering as another sample, 1.42 x the spread): where it breaks.
# The quantized net's GPU tests (the mixed nets run eagerly against the fp16 net), then ResNet-50
# Offline int8 with 53, 2 and 1 convolutions in fp16, on 1 and 3 streams, each only for its check
# (min_duration_s 2). Run from the repository root with B = the bundle's env.sh and $OUT set; raw
# output in $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
timeout 100 $B session-gpu-tests --gtest_filter='QuantNetGpu.*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|in fp16:|what" "$RAW/unit.txt" | cut -c1-400 | head -40
for p in 53:1 53:3:heuristic 2:3 2:1; do
  IFS=: read -r split streams algo <<< "$p"
  start=$SECONDS
  timeout 60 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=int8 -p fp16_convolutions=$split -p max_batch=256 -p streams=$streams -p algo=${algo:-search} \
    -p scenario=offline -p min_duration_s=2 > "$RAW/check-$split-$streams$algo.jsonl" 2>&1
  echo "int8 fp16_convolutions=$split streams=$streams ${algo:-search} rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details samples_per_second,check.max_error_x_spread,check.top1_agree,engine.build_s "$RAW/check-$split-$streams$algo.jsonl" | tail -1 | cut -c1-600
done
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
