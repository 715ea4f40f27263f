#!/bin/bash
# One short call on a 4 x H200 machine, from the repository root with OUT set: ResNet-50 bf16 and
# fp16, batch 256 per GPU, on 1 GPU and then 4, each record with its clock limits (how long NVML
# counted each GPU held down by its power or thermal limit during the point).
set -u
E=${B:-.gpu-bundle}/env.sh
W=$OUT/w; mkdir -p $W
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
for p in bf16 fp16; do
  for n in 1 4; do
    timeout 50 $E mpirun -np $n scalebench-run train -p precision=$p $P > $W/${p}_np$n.log 2>&1
    echo "${p}_np$n rc=$?" >> $W/summary.txt
  done
done
