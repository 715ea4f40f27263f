#!/bin/bash
# Call 6 on one H200 (a fresh machine; no data needed): the GPU tests of the 8-bit ResNet-50 engine
# after call 4 found its convolutions ordered otherwise than fmnist-resnet's; then ResNet-50 Offline
# at batch 256 on 3 streams in fp16, int8 and fp8e4m3, one after the other. Run from the repository
# root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call6-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
timeout 100 $B session-gpu-tests --gtest_filter='InferGpu.ResNet50*:QuantNetGpu.Refuses*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|spread|what" "$RAW/unit.txt" | head -30
echo "== ResNet-50 Offline, batch 256, 3 streams: fp16, int8, fp8e4m3"
for p in fp16 int8 fp8e4m3; do
  start=$SECONDS
  timeout 100 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=$p -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 > "$RAW/offline-$p.jsonl" 2>&1
  echo "$p rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details verdict,samples_per_second,check,engine.build_s,engine.device_bytes,engine.quantization.first_convolution "$RAW/offline-$p.jsonl" | cut -c1-700
  grep -iE "error|what\(\)" "$RAW/offline-$p.jsonl" | cut -c1-300 | head -3
done
tar -C "$OUT" -czf "$OUT/call6-raw.tar.gz" raw && rm -rf "$OUT/raw"
