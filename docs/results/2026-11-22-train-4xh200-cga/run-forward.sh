#!/bin/bash
# Why the forward pass is 0.15 ms slower in the step with all-reduce (no all-reduce runs beside it):
# NCCL's graph mixing support off, and eager steps (graph=false), beside the default and 1-GPU
# runs, two rounds interleaved. From the repository root on the GPU machine, OUT set.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/fwd; mkdir -p $W
finish() { tar czf $OUT/fwd.tgz -C $OUT fwd; }
trap finish EXIT
T0=$(date +%s)
t() { local name=$1 lim=$2; shift 2
  if [ $(( $(date +%s) - T0 )) -gt 400 ]; then echo "$name not run: out of time" >> $W/runs.txt; return; fi
  local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; gzip -f $W/$name.log; }
for round in 1 2; do
for p in bf16 tf32; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
  t r${round}_${p}_np1 60 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true
  t r${round}_${p}_np4_mix0 60 env NCCL_GRAPH_MIXING_SUPPORT=0 $E mpirun -np 4 scalebench-run train $P -p timeline=true
  if [ $p = bf16 ]; then
    t r${round}_${p}_np1_eager 60 $E mpirun -np 1 scalebench-run train $P -p graph=false
    t r${round}_${p}_np4_eager 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p graph=false
  fi
done
done
