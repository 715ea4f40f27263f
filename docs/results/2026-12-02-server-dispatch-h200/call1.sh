#!/bin/bash
# Call 1 on a fresh H200 after docs/results/2026-12-01-server-buckets-h200/call0.sh a, then b: the
# GPU regression study at the session's start; the fused fp16 ResNet-50 engine Offline with the
# image's convolution by cuDNN's heuristic (algo=heuristic) and by its Find (the default); then the
# Server search on it, partial batches dispatched on their timeout (the old way) and when a stream
# is idle (the new default), on 3 streams and on 2, one after another in this call.
. "$(dirname "$0")/lib.sh"
gpu_facts
regression_study
offline fused-heuristic 45 -p precision=fp16 -p conv_api=fused -p algo=heuristic
offline fused-find 45 -p precision=fp16 -p conv_api=fused
image_algo fused-heuristic
image_algo fused-find
server on-timeout-3 150 -p precision=fp16 -p conv_api=fused -p streams=3 -p batch_timeout_ms=4 -p dispatch=on_timeout
server when-idle-3 150 -p precision=fp16 -p conv_api=fused -p streams=3 -p batch_timeout_ms=4 -p dispatch=when_idle
server when-idle-2 130 -p precision=fp16 -p conv_api=fused -p streams=2 -p batch_timeout_ms=4 -p dispatch=when_idle
pack 1
