#!/bin/bash
# tf32 at 4 GPUs: 1 and 2 GPUs beside 4, eager launches (graph=false) with and without overlap, NCCL_PROTO=Simple, NCCL_ALGO=Tree. OUT set; B=BUNDLE.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/tf; mkdir -p $W
finish() { tar czf $OUT/tf.tgz -C $OUT tf; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
P="-p precision=tf32 -p batch=128 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
t np1 30 $E mpirun -np 1 scalebench-run train $P
t np2 30 $E mpirun -np 2 scalebench-run train $P
t np4 30 $E mpirun -np 4 scalebench-run train $P
t np4_eager 30 $E mpirun -np 4 scalebench-run train $P -p graph=false
t np4_eager_nooverlap 30 $E mpirun -np 4 scalebench-run train $P -p graph=false -p overlap=false
NCCL_PROTO=Simple t np4_simple 30 $E mpirun -np 4 -x NCCL_PROTO scalebench-run train $P
NCCL_ALGO=Tree t np4_tree 30 $E mpirun -np 4 -x NCCL_ALGO scalebench-run train $P
t np1_b 30 $E mpirun -np 1 scalebench-run train $P
