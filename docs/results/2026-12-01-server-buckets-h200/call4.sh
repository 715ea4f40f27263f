#!/bin/bash
# Call 4 on one H200 (a fresh machine; `call0.sh a` unpacked Fashion-MNIST's training images, this
# call the rest, carried beside a bundle of scalebench-run and the GPU tests): the GPU tests of the
# quantized net (the image's convolution quantized and in the trained precision) and of the infer
# engine in int8 and fp8e4m3; time to accuracy on Fashion-MNIST, each trained net quantized to int8
# and E4M3 (E4M3's first convolution in bf16 now); ResNet-50 Offline in fp16, int8 and fp8e4m3.
# Programs at the commit the README names. Run from the repository root with B = the bundle's
# env.sh and $OUT set; raw output in $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw" /usr/share/datasets/fashion-mnist && cp .gpu-data/b/* /usr/share/datasets/fashion-mnist/
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
timeout 120 $B session-gpu-tests --gtest_filter='QuantNetGpu.*:InferGpu.*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|spread" "$RAW/unit.txt" | head -40
echo "== time to accuracy, then each trained net quantized (int8, E4M3)"; start=$SECONDS
timeout 120 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run train --format json -p data=fashion-mnist \
  -p model=fmnist-resnet -p precision=bf16 -p batch=512 -p weight_decay=0.0005 -p target_accuracy=0.937 -p max_epochs=10 \
  -p seeds=3 -p quantize=int8,fp8e4m3 > "$RAW/tta-quantized.jsonl" 2> "$RAW/tta-quantized.err"
echo "tta rc=$? in $((SECONDS - start)) s"
python3 scripts/record-summary.py --details trained_accuracy,lost_points,quantization.first_convolution "$RAW/tta-quantized.jsonl" | cut -c1-400
tail -3 "$RAW/tta-quantized.err"
echo "== ResNet-50 Offline, batch 256, 3 streams: fp16, int8, fp8e4m3"
for p in fp16 int8 fp8e4m3; do
  start=$SECONDS
  timeout 100 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=$p -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 > "$RAW/offline-$p.jsonl" 2>&1
  echo "$p rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details verdict,samples_per_second,check,build_s "$RAW/offline-$p.jsonl" | cut -c1-600
  grep -iE "error|what\(\)" "$RAW/offline-$p.jsonl" | head -3
done
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
