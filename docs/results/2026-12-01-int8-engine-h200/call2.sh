#!/bin/bash
# Call 2 on another H200 machine (Fashion-MNIST put in place again by call0.sh a, then b), at the
# commit that runs the engines' image convolution in fp16 for int8 too: ResNet-50 Offline at batch
# 256 on 3 streams in fp16, int8, fp8e4m3, then int8 again; the quantized graph's GPU tests that
# call 1's time limit cut; then the GPU regression study at the session's end. Run from the
# repository root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== ResNet-50 Offline, batch 256, 3 streams"
for p in fp16:70 int8:80 fp8e4m3:100 int8:80; do
  start=$SECONDS
  timeout ${p#*:} $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=${p%:*} -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 >> "$RAW/offline-${p%:*}.jsonl" 2>&1
  echo "${p%:*} rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details verdict,samples_per_second,check.max_error_x_spread,engine.build_s,engine.device_bytes,engine.quantization.first_convolution,engine.quantization.plans,engine.quantization.convolutions_us "$RAW/offline-${p%:*}.jsonl" | tail -1 | cut -c1-900
  grep -iE "error|what\(\)" "$RAW/offline-${p%:*}.jsonl" | cut -c1-300 | head -3
done
echo "== GPU tests"; start=$SECONDS
timeout 100 $B session-gpu-tests --gtest_filter='ResNet50Layers/QuantConvGraphGpu.*fp8*:QuantConvGraphGpuErrors.*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is" "$RAW/unit.txt" | cut -c1-300 | head -30
echo "== regression study"; start=$SECONDS
timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-12-01-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
