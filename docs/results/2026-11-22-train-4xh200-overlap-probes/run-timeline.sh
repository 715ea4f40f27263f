#!/bin/bash
# next session: the step timeline at 4 GPUs (tf32, fp16, bf16) beside 1-GPU runs
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/tl; mkdir -p $W
finish() { tar czf $OUT/tl.tgz -C $OUT tl; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
for p in tf32 fp16 bf16; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
  t ${p}_np1 40 $E mpirun -np 1 scalebench-run train $P
  t ${p}_np4_tl 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true
  t ${p}_np4_tl_eager 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p graph=false
done
