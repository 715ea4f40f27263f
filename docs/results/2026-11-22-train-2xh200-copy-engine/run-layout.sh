#!/bin/bash
# Does the gradient buffer's allocator move the 1-GPU step? The 1-GPU run with the net's own
# cudaMalloc'd gradients (OLD, the programs before) against ncclMemAlloc'd ones as on several GPUs
# (scalebench-run of this commit), beside the NP-GPU run, in each precision of PRECS, ROUNDS
# rounds in alternating order. From the repository root on the GPU machine, OUT set; OLD (the
# previous scalebench-run in the bundle's bin), NP (default 2), PRECS (default "tf32 bf16 fp16"),
# ROUNDS (default 2), BUDGET (seconds after which no run starts, default 480).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-2}; PRECS=${PRECS:-"tf32 bf16 fp16"}; OLD=${OLD:-scalebench-run-525d3a9}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
export NCCL_NVLS_ENABLE=0
source scripts/timed-runs.sh
runs_begin layout ${BUDGET:-480}
for round in $(seq $ROUNDS); do
  for prec in $PRECS; do
    batch=256; [ $prec = tf32 ] && batch=128
    P="-p precision=$prec -p batch=$batch -p warmup=10 -p steps=5 --repetitions 8 --emit records"
    order="old new"; [ $((round % 2)) = 0 ] && order="new old"
    for v in $order; do
      prog=scalebench-run; [ $v = old ] && prog=$OLD
      timed_run r${round}_${prec}_np1_$v 120 $E mpirun -np 1 $prog train $P
    done
    timed_run r${round}_${prec}_np${NP}_new 120 $E mpirun -np $NP scalebench-run train $P
  done
done
