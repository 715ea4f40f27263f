#!/bin/bash
# Scaling 1 -> 4 GPUs at the study's batch per GPU and at twice it, per precision, rounds
# interleaved. From the repository root on the GPU machine, OUT set; NP GPUs (default 4), ROUNDS
# (default 2).
set -u
NP=${NP:-4}; ROUNDS=${ROUNDS:-2}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/batch; mkdir -p $W
finish() { tar czf $OUT/batch.tgz -C $OUT batch; }
trap finish EXIT
T0=$(date +%s)
t() { local name=$1 lim=$2; shift 2
  if [ $(( $(date +%s) - T0 )) -gt 520 ]; then echo "$name not run: out of time" >> $W/runs.txt; return; fi
  local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; gzip -f $W/$name.log; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
for round in $(seq $ROUNDS); do
for p in fp16 tf32 bf16; do
  for mult in 1 2; do
    b=256; [ $p = tf32 ] && b=128; b=$(( b * mult ))
    P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records"
    t r${round}_${p}_b${b}_np1 90 $E mpirun -np 1 scalebench-run train $P
    t r${round}_${p}_b${b}_np$NP 90 $E mpirun -np $NP scalebench-run train $P -p timeline=true
  done
done
done
