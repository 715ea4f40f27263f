#!/bin/bash
# NCCL's efficiency CTA policy, with DDP-sized and tapered buckets, beside 1-GPU runs
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/j; mkdir -p $W
finish() { tar czf $OUT/j.tgz -C $OUT j; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
t nccl_eff 40 $E mpirun -np 4 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,TUNING scalebench-run train -p precision=tf32 -p batch=32 -p warmup=1 -p steps=1 --repetitions 2 --emit records -p check=false -p cta_policy=efficiency
for p in tf32 fp16 bf16; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false -p timeline=true"
  t ${p}_np1a 40 $E mpirun -np 1 scalebench-run train $P
  t ${p}_np4_size 60 $E mpirun -np 4 scalebench-run train $P -p bucket_policy=size
  t ${p}_np4_size_eff 60 $E mpirun -np 4 scalebench-run train $P -p bucket_policy=size -p cta_policy=efficiency
  t ${p}_np4_taper_eff 60 $E mpirun -np 4 scalebench-run train $P -p bucket_policy=taper -p cta_policy=efficiency
  t ${p}_np1b 40 $E mpirun -np 1 scalebench-run train $P
done
