#!/bin/bash
# Call 7 on one H200: after the convolution descriptor moved to workloads/gpu/cudnn_backend.cpp
# (shared by the fp32 graph plans and the quantized graph), the quantized graph's GPU tests and two
# fp32 runs that take the graph API's plans (tiny-inception with its gradient check, ResNet-50
# batch 32). Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT"
(timeout 90 $B scalebench-unit-tests --gtest_filter='*QuantConvGraphGpu*' 2>&1 | grep -E "^\[  (PASSED|FAILED)|FAILED" | head -5
 timeout 60 $B mpirun --allow-run-as-root -np 1 scalebench-run train -p model=tiny-inception -p precision=fp32 -p batch=8 \
   --repetitions 3 --emit records 2>/dev/null |
   python3 scripts/record-summary.py --details graph_plans_tried,graph_api_skipped_convs,gradient_check.wrong,gradient_check.max_rel_error
 timeout 60 $B mpirun --allow-run-as-root -np 1 scalebench-run train -p model=resnet50 -p precision=fp32 -p batch=32 -p warmup=2 \
   -p steps=2 --repetitions 3 --emit records 2>/dev/null | python3 scripts/record-summary.py --details graph_plans_tried,conv_api
) 2>&1 | tee "$OUT/call7-console.txt"
