#!/bin/bash
# One GPU: the GPU unit tests (TrainGpu.*), then ResNet-50 training steps with each program of
# PROGS (label:program, space-separated), the order rotating per round, in each precision of
# PRECS (precision:batch). From the repository root on the GPU machine, OUT set; ROUNDS (default
# 2), BUDGET (seconds after which no run starts, default 420), NAME (the runs' folder, default ab).
set -u
ROUNDS=${ROUNDS:-2}
PROGS=${PROGS:-"before:scalebench-run-135b28c after:scalebench-run"}
PRECS=${PRECS:-"fp16:256 bf16:256 tf32:128 fp32:128"}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin ${NAME:-ab} ${BUDGET:-420}
timed_run unit-tests 120 $E scalebench-unit-tests --gtest_filter='TrainGpu.*'
read -ra progs <<< "$PROGS"
for round in $(seq $ROUNDS); do
  for pb in $PRECS; do
    p=${pb%:*}; b=${pb#*:}
    P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records"
    n=${#progs[@]}
    for k in $(seq 0 $((n - 1))); do
      lp=${progs[$(((k + round - 1) % n))]}
      timed_run r${round}_${p}_${lp%%:*} 120 $E mpirun -np 1 ${lp#*:} train $P
    done
  done
done
