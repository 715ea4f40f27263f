#!/bin/bash
# Per-layer backward stretch (timeline=true) and gradients in a symmetric NCCL window, against the
# default, beside 1-GPU runs, two rounds. From the repository root on the GPU machine, OUT set.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/ss; mkdir -p $W
finish() { tar czf $OUT/ss.tgz -C $OUT ss; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
for round in 1 2; do
for p in tf32 bf16 fp16; do
  b=256; [ $p = tf32 ] && b=128
  chk=false; [ $round = 1 ] && chk=true
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=$chk"
  t r${round}_${p}_np1 60 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4 90 $E mpirun -np 4 scalebench-run train $P -p timeline=true
  t r${round}_${p}_np4_sym 90 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p symmetric=true
done
done
