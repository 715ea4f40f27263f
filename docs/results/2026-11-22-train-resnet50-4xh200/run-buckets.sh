#!/bin/bash
# The second call: bucket size (5, 10 MiB against the 25 of run.sh) and comm_ctas, 1 -> 4 GPUs,
# each 4-GPU run beside a 1-GPU run of the same call. Same B and OUT as run.sh.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/w; mkdir -p $W
finish() { tar czf $OUT/all.tgz -C $OUT w && rm -rf $W; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
for p in bf16 fp16; do
  t ${p}_np1 60 $E mpirun -np 1 scalebench-run train -p precision=$p $P
  for bc in 5:0 5:8 10:8; do
    t ${p}_np4_b${bc%:*}_c${bc#*:} 60 $E mpirun -np 4 scalebench-run train -p precision=$p -p bucket_mb=${bc%:*} -p comm_ctas=${bc#*:} $P
  done
done
