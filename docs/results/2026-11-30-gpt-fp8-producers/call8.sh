#!/bin/bash
# Call 8 on one H200, the session's end after the review's mends (265daf4: one GELU constant, the
# cast kernel's comment moved, INVALID_VALUE an error again for bf16-output GEMMs): the GPU regression study on GPU 0 (Fashion-MNIST unpacked by the call
# before), then the GPU tests of the GPT workload's FP8 path and AdamW (fp8-gpu-tests). Run from
# the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call8-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED" "$RAW/gr.txt" | cut -c1-120 | tail -20
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptAdamwGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure" "$RAW/unit.txt" | head -20
tar -C "$OUT" -czf "$OUT/call8-raw.tar.gz" raw && rm -rf "$OUT/raw"
