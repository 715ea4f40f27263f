#!/bin/bash
# Call 2 on a fresh H200 after call0.sh a, then b: ResNet-50 Offline at batch 256, ours (infer on 3
# streams, layer by layer and fused, the image's convolution timed both ways) and the torch.compile
# peer (reduce-overhead; max-autotune with cuDNN's convolutions, --conv-backends ATEN), in fp16 and
# bf16, one after another in this one call.
. "$(dirname "$0")/lib.sh"
gpu_facts
offline fp16-fused 60 -p precision=fp16 -p conv_api=fused
peer fp16 reduce-overhead 100
offline fp16 40 -p precision=fp16
peer fp16 max-autotune 240 --conv-backends ATEN
offline bf16-fused 60 -p precision=bf16 -p conv_api=fused
peer bf16 reduce-overhead 100
offline bf16 40 -p precision=bf16
offline fp16-fused-2 60 -p precision=fp16 -p conv_api=fused
pack 2
