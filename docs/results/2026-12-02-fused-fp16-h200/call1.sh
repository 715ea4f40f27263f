#!/bin/bash
# Call 1 on a fresh H200 after call0.sh a, then b (../2026-12-01-server-buckets-h200): the GPU
# tests of what has not run on a GPU (the vectorised 8-bit kernels, the quantized net split by
# concept, plan agreement in tuning, the fused fp16 engine), the GPU regression study at the
# session's start, then ResNet-50 Offline at batch 256 on 3 streams: int8 and fp8e4m3 with the
# split timed, fp16 layer by layer and fused (plans timed and verified; the heuristic's first).
. "$(dirname "$0")/lib.sh"
gpu_facts
gpu_tests 'PlanAgreement.*:*QuantConvGraphGpu*:QuantKernelsGpu.*:QuantNetGpu.*:InferGpu.ResNet50Fused*' 200
regression_study
offline fp16 40 -p precision=fp16
offline fp16-fused 60 -p precision=fp16 -p conv_api=fused
offline fp16-fused-heuristic 40 -p precision=fp16 -p conv_api=fused -p algo=heuristic
offline int8 100 -p precision=int8
offline fp8e4m3 100 -p precision=fp8e4m3
pack 1
