#!/bin/bash
# ResNet-50 training, batch 256 per GPU, bf16 and fp16, two rounds: 1 GPU alone on each of the
# four GPUs in turn (CUDA_VISIBLE_DEVICES), then all 4 over NVLink, then all 4 with P2P off
# (NCCL through host memory); every record with its conv algorithms and clock limits.
# From the repository root on the GPU machine, OUT set: B=BUNDLE NAME=before|after run-pergpu.sh
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/${NAME:-pergpu}; mkdir -p $W
finish() { tar czf $OUT/${NAME:-pergpu}.tgz -C $OUT ${NAME:-pergpu}; }
trap finish EXIT
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.max.sm,power.limit,temperature.gpu,power.draw --format=csv > $W/gpu.txt 2>&1
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
P="-p batch=256 -p warmup=20 -p steps=5 --repetitions 8 --emit records -p check=false"
T0=$(date +%s)
for round in 1 2; do
  for p in bf16 fp16; do
    for g in 0 1 2 3; do
      CUDA_VISIBLE_DEVICES=$g t ${p}_np1_gpu${g}_r$round 40 $E mpirun -np 1 -x CUDA_VISIBLE_DEVICES scalebench-run train -p precision=$p $P
    done
    t ${p}_np4_nvlink_r$round 50 $E mpirun -np 4 scalebench-run train -p precision=$p $P
    NCCL_P2P_DISABLE=1 t ${p}_np4_pcie_r$round 50 $E mpirun -np 4 -x NCCL_P2P_DISABLE scalebench-run train -p precision=$p $P
    nvidia-smi --query-gpu=index,temperature.gpu,power.draw,clocks.sm --format=csv,noheader >> $W/gpu-after.txt 2>&1
    [ $(( $(date +%s)-T0 )) -gt 480 ] && exit 0
  done
done
