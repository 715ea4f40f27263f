#!/bin/bash
# graph node priority and tapered buckets against the previous binary, same call
# B holds scalebench-run (ecd6d54) and scalebench-run-old (30343bd).
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/h; mkdir -p $W
finish() { tar czf $OUT/h.tgz -C $OUT h; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
for round in 1 2; do
for p in tf32 fp16 bf16; do
  [ $round = 2 ] && [ $p = bf16 ] && continue
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false -p timeline=true"
  t r${round}_${p}_np1a 40 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4_old 60 $E mpirun -np 4 scalebench-run-old train $P
  t r${round}_${p}_np4_size 60 $E mpirun -np 4 scalebench-run train $P -p bucket_policy=size
  t r${round}_${p}_np4_taper 60 $E mpirun -np 4 scalebench-run train $P
  t r${round}_${p}_np1b 40 $E mpirun -np 1 scalebench-run train $P
done
done
