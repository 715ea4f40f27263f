#!/bin/bash
# Call 5 on an H200 after call0.sh a (2026-12-01-server-buckets-h200), .gpu-data/b carried: the 8-bit ResNet-50 GPU test
# with its batch sizes' check at 0.8 of the spread and each size's logits held to the fp16 engine's
# (call 1 failed it at 0.5272 for int8, the same value as 2026-12-02-fused-fp16-h200's call 3: not a
# wrong net); then the GPU regression study, the session's last device work.
. "$(dirname "$0")/../2026-12-02-fused-fp16-h200/lib.sh"
mkdir -p /usr/share/datasets/fashion-mnist && cp .gpu-data/*/* /usr/share/datasets/fashion-mnist/
gpu_facts
gpu_tests 'InferGpu.ResNet50EightBit*' 100
regression_study
pack 5
