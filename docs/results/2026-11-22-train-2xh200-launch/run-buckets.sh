#!/bin/bash
# fp16 ResNet-50 on NP GPUs with bucket_launch=after_fused_bn (the default): DDP's 25 MiB buckets
# against 12 MiB buckets and tapered ones, each beside a 1-GPU run of the same round; rounds
# interleaved, the order rotating. From the repository root on the GPU machine, OUT set; NP
# (default 2), ROUNDS (default 3).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-3}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin buckets
declare -A SET=([size25]="" [size12]="-p bucket_mb=12" [taper25]="-p bucket_policy=taper")
ORDERS=("size25 size12 taper25" "size12 taper25 size25" "taper25 size25 size12")
for round in $(seq $ROUNDS); do
  P="-p precision=fp16 -p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=true"
  timed_run r${round}_fp16_np1 90 $E mpirun -np 1 scalebench-run train $P
  for s in ${ORDERS[$(( (round - 1) % 3 ))]}; do
    timed_run r${round}_fp16_np${NP}_$s 90 $E mpirun -np $NP scalebench-run train $P ${SET[$s]}
  done
done
