#!/bin/bash
# NCCL CTA caps and BN kernels with unbounded grids, against the node-priority build, same call
# B holds scalebench-run (ecd6d54) and scalebench-run-dyn (ecd6d54 with blocks_for uncapped and reduce_grid at 8192 blocks, not kept).
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/i; mkdir -p $W
finish() { tar czf $OUT/i.tgz -C $OUT i; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
t nccl_channels 40 $E mpirun -np 4 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,TUNING,GRAPH scalebench-run train -p precision=tf32 -p batch=32 -p warmup=1 -p steps=1 --repetitions 2 --emit records -p check=false
for p in tf32 bf16 fp16; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false -p timeline=true -p bucket_policy=size"
  t ${p}_np1_new 40 $E mpirun -np 1 scalebench-run train $P
  t ${p}_np1_dyn 40 $E mpirun -np 1 scalebench-run-dyn train $P
  t ${p}_np4_new 60 $E mpirun -np 4 scalebench-run train $P
  t ${p}_np4_ctas8 60 $E mpirun -np 4 scalebench-run train $P -p comm_ctas=8
  t ${p}_np4_ctas16 60 $E mpirun -np 4 scalebench-run train $P -p comm_ctas=16
  t ${p}_np4_dyn 60 $E mpirun -np 4 scalebench-run-dyn train $P
  t ${p}_np4_dyn_ctas16 60 $E mpirun -np 4 scalebench-run-dyn train $P -p comm_ctas=16
  t ${p}_np4_dyn_taper 60 $E mpirun -np 4 scalebench-run-dyn train $P -p bucket_policy=taper
done
