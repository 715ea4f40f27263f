#!/bin/bash
# The conv workload's first GPU run (1 x H200), then its PyTorch peer on the same layers.
set +e
B=$(cd "$(dirname "$0")" && pwd); E="$B/env.sh"; OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
C="mpirun -np 1 scalebench-run conv --repetitions 5 -p warmup=3 -p time_cap=0.03 -p batch=64"
NCHW_SHAPES="64x3x7x7@224x224:s2:p3,64x64x3x3@56x56:p1,128x128x3x3@28x28:p1,1024x256x1x1@14x14,512x512x3x3@7x7:p1"
run() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N)
  timeout -k 2 "$limit" "$@" > "$OUT/$name.txt" 2>&1; local rc=$?
  echo "$name rc=$rc seconds=$(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$OUT/summary.txt"; }
run nhwc_heuristic 32 "$E" $C -p layout=nhwc -p algo=heuristic -p precision=fp16,bf16,tf32,fp32
run peer 24 python3 .peers-torch/conv_peer.py 64
run nhwc_search_16bit 21 "$E" $C -p layout=nhwc -p algo=search -p precision=fp16,bf16
run nhwc_search_32bit 14 "$E" $C -p layout=nhwc -p algo=search -p precision=tf32,fp32
run nchw_heuristic 10 "$E" $C -p layout=nchw -p algo=heuristic -p precision=fp16,bf16,tf32,fp32 -p shapes=$NCHW_SHAPES
run two_ranks_one_gpu 7 "$E" mpirun -np 2 scalebench-run conv --repetitions 3 -p precision=fp16 -p pass=fwd,bwd_filter -p shapes=256x64x1x1@56x56 --emit records
tail -n 3 "$OUT"/*.txt
