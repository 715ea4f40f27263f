#!/bin/bash
# Call 1 on a fresh H200 after call0.sh a, then b (docs/results/2026-12-01-server-buckets-h200): the
# GPU regression study at the session's start; the GPU tests of the quantized and fused nets; then
# whether a543eea (weights copied on the net's stream) ends the wrong nets: the fused fp16 and the
# int8 engines on 3 streams, three times each, every stream's net compared. Also twice a build of
# scalebench-run with a plan cache per stream (scalebench-run-lane-plans, not on main), in case the
# nets are still wrong. The GPU tests include the new 1x1-convolutions-as-matmuls check (59c56fa).
. "$(dirname "$0")/../2026-12-02-fused-fp16-h200/lib.sh"
OFFLINE_DETAILS=check.spread,check.max_error_across_streams_x_spread
gpu_facts
regression_study
gpu_tests 'QuantNetGpu.*:InferGpu.ResNet50*:QuantKernelsGpu.*:PlanAgreement.*:TrainGpu.TinyNasnetPointwise*' 180
for k in 1 2 3; do offline fp16-fused-s3-$k 45 -p precision=fp16 -p conv_api=fused; done
for k in 1 2 3; do offline int8-s3-$k 90 -p precision=int8; done
if [ -x .gpu-bundle/bin/scalebench-run-lane-plans ]; then
  for k in 1 2; do
    start=$SECONDS
    timeout 45 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run-lane-plans infer --format json \
      -p model=resnet50 -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 -p precision=fp16 \
      -p conv_api=fused > "$RAW/offline-lane-plans-$k.jsonl" 2>&1
    echo "lane-plans $k rc=$? in $((SECONDS - start)) s"
    python3 scripts/record-summary.py --details samples_per_second,check.max_error_x_spread,$OFFLINE_DETAILS \
      "$RAW/offline-lane-plans-$k.jsonl" | tail -1 | cut -c1-600
  done
fi
pack 1
