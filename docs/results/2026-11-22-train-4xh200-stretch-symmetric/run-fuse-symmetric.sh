#!/bin/bash
# Call 2: the default against symmetric=true, and in fp16 fuse_beside_allreduce=false (alone and with
# symmetric), all with timeline=true (forward and backward stretch), beside 1-GPU runs, two
# rounds; then bf16 with P2P off (NCCL through host memory) with and without symmetric.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/fs; mkdir -p $W
finish() { tar czf $OUT/fs.tgz -C $OUT fs; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
for round in 1 2; do
for p in fp16 bf16 tf32; do
  b=256; [ $p = tf32 ] && b=128
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false -p timeline=true"
  t r${round}_${p}_np1 60 $E mpirun -np 1 scalebench-run train $P
  t r${round}_${p}_np4 90 $E mpirun -np 4 scalebench-run train $P
  t r${round}_${p}_np4_sym 90 $E mpirun -np 4 scalebench-run train $P -p symmetric=true
  if [ $p = fp16 ]; then
    t r${round}_${p}_np4_nofuse 90 $E mpirun -np 4 scalebench-run train $P -p fuse_beside_allreduce=false
    t r${round}_${p}_np4_sym_nofuse 90 $E mpirun -np 4 scalebench-run train $P -p symmetric=true -p fuse_beside_allreduce=false
  fi
done
done
P="-p precision=bf16 -p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
t pcie_bf16_np4 90 $E mpirun -np 4 -x NCCL_P2P_DISABLE=1 scalebench-run train $P
t pcie_bf16_np4_sym 90 $E mpirun -np 4 -x NCCL_P2P_DISABLE=1 scalebench-run train $P -p symmetric=true
