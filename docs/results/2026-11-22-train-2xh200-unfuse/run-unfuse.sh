#!/bin/bash
# fp16 ResNet-50 on NP GPUs with the launch after the persistent batch norm (the default), and
# unfuse_after_launch = 0, 1, 2: that many persistent batch norms after each all-reduce's launch
# run in our kernels instead. Each round: a 1-GPU run, then the three in a rotating order.
# From the repository root on the GPU machine, OUT set; NP (default 4), ROUNDS (default 3),
# BUDGET (seconds after which no run starts, default 300).
set -u
NP=${NP:-4}; ROUNDS=${ROUNDS:-3}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin unfuse ${BUDGET:-300}
nvidia-smi topo -m > $RUNS_DIR/topo.txt 2>&1
P="-p precision=fp16 -p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=true"
for round in $(seq $ROUNDS); do
  timed_run r${round}_fp16_np1 90 $E mpirun -np 1 scalebench-run train $P
  case $((round % 3)) in 1) order="0 1 2" ;; 2) order="1 2 0" ;; 0) order="2 0 1" ;; esac
  for u in $order; do
    timed_run r${round}_fp16_np${NP}_unfuse$u 90 $E mpirun -np $NP scalebench-run train $P -p unfuse_after_launch=$u
  done
done
