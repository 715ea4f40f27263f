#!/bin/bash
# Call 3 on an H200 (Fashion-MNIST unpacked by call0.sh a, then b, on that machine): NASNet-A Mobile
# fp16 training at batch 512 with its 1x1 convolutions of 11, 22 and 44 channels as cuBLASLt
# matmuls (pointwise: auto, new) and in cuDNN (pointwise: cudnn, as before), alternated; then the
# GPU regression study at the session's end.
. "$(dirname "$0")/../2026-12-02-fused-fp16-h200/lib.sh"
gpu_facts
nasnet() {
  local name=$1 start=$SECONDS
  shift
  timeout 90 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run train -p model=nasnet -p precision=fp16 \
    -p batch=512 -p warmup=5 -p steps=5 "$@" --repetitions 5 --emit records \
    > "$RAW/nasnet-$name.jsonl" 2> "$RAW/nasnet-$name.err"
  echo "nasnet $name ($*) rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details \
    step_ms,pointwise_matmuls,depthwise_kernels,profile.by_op_ms,gradient_check.wrong \
    "$RAW/nasnet-$name.jsonl" | tail -1 | cut -c1-1200
  tail -2 "$RAW/nasnet-$name.err"
}
nasnet auto-1 -p pointwise=auto
nasnet cudnn-1 -p pointwise=cudnn
nasnet auto-2 -p pointwise=auto
regression_study
pack 3
