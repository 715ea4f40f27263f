#!/bin/bash
# One GPU: the GPU unit tests (TrainGpu.*), then ResNet-50 training steps with max pooling in
# cuDNN (BEFORE, the scalebench-run of 135b28c) and in our kernels (scalebench-run), alternating
# which goes first, in each precision at the study's batch. From the repository root on the GPU
# machine, OUT set; ROUNDS (default 2), BUDGET (seconds after which no run starts, default 420).
set -u
ROUNDS=${ROUNDS:-2}; BEFORE=${BEFORE:-scalebench-run-135b28c}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin maxpool ${BUDGET:-420}
timed_run unit-tests 120 $E scalebench-unit-tests --gtest_filter='TrainGpu.*'
for round in $(seq $ROUNDS); do
  for pb in fp16:256 bf16:256 tf32:128 fp32:128; do
    p=${pb%:*}; b=${pb#*:}
    P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records"
    if [ $((round % 2)) = 1 ]; then order="cudnn ours"; else order="ours cudnn"; fi
    for o in $order; do
      if [ $o = cudnn ]; then prog=$BEFORE; else prog=scalebench-run; fi
      timed_run r${round}_${p}_$o 120 $E mpirun -np 1 $prog train $P
    done
  done
done
