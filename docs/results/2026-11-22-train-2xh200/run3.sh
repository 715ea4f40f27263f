#!/bin/bash
# The third call on the 2 x H200 machine: where the 2-GPU step loses time against 1 GPU. fp16 and
# bf16, batch 256, each 2-GPU setting beside 1-GPU runs of the same call: overlap off (every
# bucket's all-reduce after the backward pass), NCCL's CTA count (comm_ctas 2, 4, 16), bucket
# sizes (5, 100 MiB), eager launches instead of CUDA graphs
# (bf16: a subset).
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/train3; mkdir -p $W
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
for p in fp16 bf16; do
  t ${p}_np1_a 60 $E mpirun -np 1 scalebench-run train -p precision=$p $P
  t ${p}_np2_base 60 $E mpirun -np 2 scalebench-run train -p precision=$p $P
  t ${p}_np2_nooverlap 60 $E mpirun -np 2 scalebench-run train -p precision=$p -p overlap=false $P
  for c in 2 4 16; do [ $p = bf16 ] && [ $c != 16 ] && continue; t ${p}_np2_c$c 60 $E mpirun -np 2 scalebench-run train -p precision=$p -p comm_ctas=$c $P; done
  for b in 5 100; do [ $p = bf16 ] && [ $b = 5 ] && continue; t ${p}_np2_b$b 60 $E mpirun -np 2 scalebench-run train -p precision=$p -p bucket_mb=$b $P; done
  [ $p = fp16 ] && t ${p}_np2_eager 60 $E mpirun -np 2 scalebench-run train -p precision=$p -p graph=false $P
  t ${p}_np1_b 60 $E mpirun -np 1 scalebench-run train -p precision=$p $P
done
