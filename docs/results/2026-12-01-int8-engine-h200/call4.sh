#!/bin/bash
# Call 4 on a fresh H200 (no data needed): whether cuDNN has faster 8-bit engines for ResNet-50's
# early shapes than the 8 plans the engine times. conv at batch 256, forward, on the 56x56 and
# 28x28 shapes: fp16, then int8 with 8 and with 64 plans timed, then fp8e4m3 with 64. Run from the
# repository root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
S=64x64x1x1@56x56,64x64x3x3@56x56:p1,256x64x1x1@56x56,64x256x1x1@56x56,128x128x3x3@28x28:p1,512x128x1x1@28x28
for run in fp16:4:100 int8:8:120 int8:64:200 fp8e4m3:64:150; do
  IFS=: read -r p n t <<< "$run"
  start=$SECONDS
  timeout $t $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run conv -p shapes=$S -p batch=256 \
    -p precision=$p -p pass=fwd -p plans=$n > "$RAW/conv-$p-$n.txt" 2>&1
  echo "== conv $p, $n plans: rc=$? in $((SECONDS - start)) s"
  grep -E "x[0-9]+@|error|what" "$RAW/conv-$p-$n.txt" | cut -c1-220 | head -12
done
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
