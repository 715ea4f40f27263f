#!/bin/bash
# 1-GPU tf32 (batch 128): gradients in cudaMalloc memory against ncclMemAlloc memory (a throw-away
# build's DIAG_NCCLMEM=1, see README.md), alternating by round. From the repository root, OUT set.
set -u
ROUNDS=${ROUNDS:-5}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin diag 400
P="-p precision=tf32 -p batch=128 -p warmup=10 -p steps=5 --repetitions 8 --emit records"
for round in $(seq $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then order="cuda nccl"; else order="nccl cuda"; fi
  for m in $order; do
    if [ $m = nccl ]; then timed_run r${round}_tf32_$m 60 env DIAG_NCCLMEM=1 $E mpirun -x DIAG_NCCLMEM -np 1 scalebench-run train $P
    else timed_run r${round}_tf32_$m 60 $E mpirun -np 1 scalebench-run train $P; fi
  done
done
