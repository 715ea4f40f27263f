#!/bin/bash
# Where tf32 and fp16 lose their last percent at 4 GPUs: bucket size 5/10/25/100 MiB, overlap off,
# 4 NCCL CTAs, beside 1-GPU runs at the start and end of each precision. OUT set; B=BUNDLE.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/sw; mkdir -p $W
finish() { tar czf $OUT/sw.tgz -C $OUT sw; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
T0=$(date +%s)
for p in tf32 fp16; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
  t ${p}_np1_a 40 $E mpirun -np 1 scalebench-run train $P
  t ${p}_np4_b25 50 $E mpirun -np 4 scalebench-run train $P
  for x in bucket_mb=5 bucket_mb=10 bucket_mb=100 overlap=false comm_ctas=4; do
    t ${p}_np4_${x/=/} 50 $E mpirun -np 4 scalebench-run train $P -p $x
    [ $(( $(date +%s)-T0 )) -gt 400 ] && exit 0
  done
  t ${p}_np1_b 40 $E mpirun -np 1 scalebench-run train $P
done
