#!/bin/bash
# Call 2 on the same H200, right after call 1: the GPU tests of the quantized, fused and inference
# nets and of NASNet's gradient check (now with its 1x1 convolutions as matmuls too); then the fused
# fp16 ResNet-50 engine Offline (3 streams) and its Server search with partial batches dispatched
# when a stream is idle and little or no timeout (call 1's 4 ms timeout set the batches' size
# whichever the dispatch), on 2 and 3 streams, and on_timeout at 1 ms beside them.
. "$(dirname "$0")/lib.sh"
gpu_facts
gpu_tests 'QuantNetGpu.*:InferGpu.*:TrainGpu.TinyNasnet*' 240
offline fused 45 -p precision=fp16 -p conv_api=fused
image_algo fused
server when-idle-2-0ms 90 -p precision=fp16 -p conv_api=fused -p streams=2 -p batch_timeout_ms=0 -p dispatch=when_idle
server when-idle-2-1ms 90 -p precision=fp16 -p conv_api=fused -p streams=2 -p batch_timeout_ms=1 -p dispatch=when_idle
server when-idle-3-1ms 90 -p precision=fp16 -p conv_api=fused -p streams=3 -p batch_timeout_ms=1 -p dispatch=when_idle
server on-timeout-2-1ms 90 -p precision=fp16 -p conv_api=fused -p streams=2 -p batch_timeout_ms=1 -p dispatch=on_timeout
pack 2
