#!/bin/bash
# Call 3 on a fresh H200 after call0.sh a, then b, with the padded-image candidate reverted: the GPU
# tests of the fused and quantized nets, the fused fp16 engine five times (3 streams three times, 1
# stream twice: call 2's first fused fp16 run and its bf16 run failed the batching check, its
# second fp16 run passed), bf16 fused once, int8 and fp8e4m3 with the split timed, then the GPU regression study at
# the session's end.
. "$(dirname "$0")/lib.sh"
gpu_facts
gpu_tests 'PlanAgreement.*:QuantKernelsGpu.*:QuantNetGpu.*:InferGpu.ResNet50Fused*:InferGpu.ResNet50EightBit*' 200
for k in 1 2 3; do offline fp16-fused-s3-$k 45 -p precision=fp16 -p conv_api=fused; done
for k in 1 2; do offline fp16-fused-s1-$k 45 -p precision=fp16 -p conv_api=fused -p streams=1; done
offline bf16-fused 45 -p precision=bf16 -p conv_api=fused
offline int8 90 -p precision=int8
offline fp8e4m3 90 -p precision=fp8e4m3
regression_study
pack 3
