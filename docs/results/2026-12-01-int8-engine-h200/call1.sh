#!/bin/bash
# One H200, after Fashion-MNIST was put in place (call0.sh a, then b, of
# ../2026-12-01-server-buckets-h200): the GPU regression study at the session's start; the GPU
# tests of the quantized graphs, the quantized net and the 8-bit ResNet-50 engine; ResNet-50
# Offline at batch 256 on 3 streams in fp16, int8 and fp8e4m3, one after the other, each 8-bit
# record with its convolutions' tuned times. Run from the repository root with B = the bundle's
# env.sh and $OUT set; raw output in $OUT/call1-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-12-01-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
echo "== GPU tests"; start=$SECONDS
timeout 140 $B session-gpu-tests --gtest_filter='ResNet50Layers/QuantConvGraphGpu.*:QuantNetGpu.*:InferGpu.ResNet50EightBit*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|resnet50|what" "$RAW/unit.txt" | cut -c1-400 | head -40
echo "== ResNet-50 Offline, batch 256, 3 streams"
for p in fp16:70 int8:80 fp8e4m3:100; do
  start=$SECONDS
  timeout ${p#*:} $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=${p%:*} -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 > "$RAW/offline-${p%:*}.jsonl" 2>&1
  echo "${p%:*} rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details verdict,samples_per_second,check.max_error_x_spread,engine.build_s,engine.device_bytes,engine.quantization.build_s,engine.quantization.plans,engine.quantization.convolutions_us "$RAW/offline-${p%:*}.jsonl" | tail -1 | cut -c1-900
  grep -iE "error|what\(\)" "$RAW/offline-${p%:*}.jsonl" | cut -c1-300 | head -3
done
tar -C "$OUT" -czf "$OUT/call1-raw.tar.gz" raw && rm -rf "$OUT/raw"
