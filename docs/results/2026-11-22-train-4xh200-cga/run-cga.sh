#!/bin/bash
# NCCL's thread-block cluster size (comm_cga) for the gradient all-reduce, against NCCL's default,
# and (round 1) NCCL's copy-engine P2P transport, beside 1-GPU runs, two rounds interleaved. From the repository root on the GPU machine, OUT set.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/cga; mkdir -p $W
finish() { tar czf $OUT/cga.tgz -C $OUT cga; }
trap finish EXIT
T0=$(date +%s)
t() { local name=$1 lim=$2; shift 2
  if [ $(( $(date +%s) - T0 )) -gt 530 ]; then echo "$name not run: out of time" >> $W/runs.txt; return; fi
  local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; gzip -f $W/$name.log; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
for round in 1 2; do
for p in bf16 fp16 tf32; do
  b=256; [ $p = tf32 ] && b=128
  chk=false; [ $round = 1 ] && chk=true
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=$chk"
  t r${round}_${p}_np1 60 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true
  t r${round}_${p}_np4_cga2 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p comm_cga=2
  t r${round}_${p}_np4_cga1 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p comm_cga=1
  if [ $round = 1 ]; then
    t r${round}_${p}_np4_cga1_nosym 60 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p comm_cga=1 -p symmetric=false
    t r${round}_${p}_np4_ce_nosym 60 env NCCL_P2P_USE_CUDA_MEMCPY=1 $E mpirun -np 4 scalebench-run train $P -p timeline=true -p symmetric=false
  fi
done
done
