#!/bin/bash
# tf32 ResNet-50 on NP GPUs: gradients in a symmetric NCCL window (the default) or not, each
# beside a 1-GPU run of the same round; rounds interleaved, the order alternating. From the
# repository root on the GPU machine, OUT set; NP (default 2), ROUNDS (default 4).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-4}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin sym
for round in $(seq $ROUNDS); do
  P="-p precision=tf32 -p batch=128 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=true"
  timed_run r${round}_tf32_np1 90 $E mpirun -np 1 scalebench-run train $P
  if [ $((round % 2)) = 1 ]; then order="true false"; else order="false true"; fi
  for s in $order; do timed_run r${round}_tf32_np${NP}_sym$s 90 $E mpirun -np $NP scalebench-run train $P -p symmetric=$s; done
done
