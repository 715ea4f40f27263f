#!/bin/bash
# The 4 x H200 call: 1, 2, 4 GPUs over NVLink, 4 over PCIe (P2P off), overlap off, and the DDP peer.
B=.gpu-bundle-train
E=$B/env.sh
t() { local name=$1; shift; echo "== $name" >> $OUT/summary.txt; timeout $1 ${@:2} > $OUT/$name.log 2>&1; echo "rc=$?" >> $OUT/$name.log; }
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records"
t tiny 60 $E mpirun -np 2 scalebench-run train -p model=tiny -p batch=8 --repetitions 3 --emit records
for n in 1 2 4; do t fp16_np$n 90 $E mpirun -np $n scalebench-run train -p precision=fp16 $P; done
t fp16_np4_pcie 90 $E mpirun -np 4 -x NCCL_P2P_DISABLE=1 scalebench-run train -p precision=fp16 $P
t fp16_np4_nooverlap 90 $E mpirun -np 4 scalebench-run train -p precision=fp16 -p overlap=false -p check=false $P
for n in 1 4; do t bf16_np$n 90 $E mpirun -np $n scalebench-run train -p precision=bf16 -p check=false $P; done
cd .peers-torch
for n in 1 4; do timeout 100 torchrun --standalone --nproc_per_node=$n torch_ddp.py >> $OUT/ddp.txt 2>&1; done
