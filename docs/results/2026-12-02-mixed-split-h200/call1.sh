#!/bin/bash
# One H200, after Fashion-MNIST was put in place (call0.sh a, then b, of
# ../2026-12-01-server-buckets-h200): the GPU regression study at the session's start; ResNet-50
# Offline at batch 256 on 3 streams: fp16, then int8 and fp8e4m3 with the split timed (the
# default), int8 with only the image's convolution in fp16 (fp16_convolutions=1, as before), and
# int8 with all 53 in fp16 (every convolution through the fused fp16 graph: the mixed path's
# ceiling on the fp16 side). Run from the repository root with B = the bundle's env.sh and $OUT
# set; raw output in $OUT/call1-raw.tar.gz.
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
echo "== ResNet-50 Offline, batch 256, 3 streams"
for p in fp16:auto:40 int8:auto:100 fp8e4m3:auto:120 int8:1:70 int8:53:80; do
  IFS=: read -r prec split limit <<< "$p"
  start=$SECONDS
  timeout $limit $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
    -p precision=$prec -p fp16_convolutions=$split -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 \
    > "$RAW/offline-$prec-$split.jsonl" 2>&1
  echo "$prec fp16_convolutions=$split rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details verdict,samples_per_second,check.max_error_x_spread,engine.build_s,engine.quantization.split.trained_convolutions,engine.quantization.plans,engine.quantization.convolutions_us "$RAW/offline-$prec-$split.jsonl" | tail -1 | cut -c1-900
  grep -iE "error|what\(\)" "$RAW/offline-$prec-$split.jsonl" | cut -c1-300 | head -3
done
tar -C "$OUT" -czf "$OUT/call1-raw.tar.gz" raw && rm -rf "$OUT/raw"
