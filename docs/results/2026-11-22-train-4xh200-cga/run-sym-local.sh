#!/bin/bash
# Does the symmetric gradient buffer slow the step without communication? tf32 and fp32 (fp32
# gradients), 4 GPUs with symmetric=true and false beside 1-GPU runs, three rounds interleaved.
# From the repository root on the GPU machine, OUT set.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/sym; mkdir -p $W
finish() { tar czf $OUT/sym.tgz -C $OUT sym; }
trap finish EXIT
T0=$(date +%s)
t() { local name=$1 lim=$2; shift 2
  if [ $(( $(date +%s) - T0 )) -gt 420 ]; then echo "$name not run: out of time" >> $W/runs.txt; return; fi
  local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; gzip -f $W/$name.log; }
for round in 1 2 3; do
for p in tf32 fp32; do
  P="-p precision=$p -p batch=128 -p warmup=5 -p steps=3 --repetitions 8 --emit records -p check=false"
  t r${round}_${p}_np1 60 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4 60 $E mpirun -np 4 scalebench-run train $P
  t r${round}_${p}_np4_nosym 60 $E mpirun -np 4 scalebench-run train $P -p symmetric=false
done
done
