#!/bin/bash
# The gradient all-reduce by NCCL against the copy engines (allreduce=copy_engine) on NP GPUs, in
# each precision of PRECS. Each round: a 1-GPU run, then NCCL and the copy engines in an order
# that alternates by round. First the GPU unit tests (one GPU). From the repository root on the
# GPU machine, OUT set; NP (default 2), PRECS (default "bf16 fp16 tf32"), ROUNDS (default 2),
# BUDGET (seconds after which no run starts, default 480), TIMELINE (default true).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-2}; PRECS=${PRECS:-"bf16 fp16 tf32"}; TIMELINE=${TIMELINE:-true}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
export NCCL_NVLS_ENABLE=0
source scripts/timed-runs.sh
runs_begin copy-engine ${BUDGET:-480}
nvidia-smi topo -m > $RUNS_DIR/topo.txt 2>&1
timed_run gpu_tests 120 $E scalebench-unit-tests --gtest_filter='TrainGpu.*'
for round in $(seq $ROUNDS); do
  for prec in $PRECS; do
    batch=256; [ $prec = tf32 ] && batch=128
    P="-p precision=$prec -p batch=$batch -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=$TIMELINE"
    timed_run r${round}_${prec}_np1 120 $E mpirun -np 1 scalebench-run train $P
    order="nccl copy_engine"; [ $((round % 2)) = 0 ] && order="copy_engine nccl"
    for a in $order; do
      timed_run r${round}_${prec}_np${NP}_$a 120 $E mpirun -np $NP scalebench-run train $P -p allreduce=$a
    done
  done
done
