#!/bin/bash
# One call on a 2 x H200 machine, from the repository root with OUT set: (1) the train workload's
# transport check on real NCCL connections: a run asking for `pcie` with P2P really off must pass
# and say SHM; one asking for `pcie` while P2P is on (the "secretly NVLink" row) must fail with
# the reason; one asking for `nvlink` must say P2P; (2) 1-GPU ResNet-50 on each GPU alone (is one
# GPU slower than the other?) and 2-GPU data-parallel runs, fp16 and bf16, two interleaved
# rounds. B: the bundle (bin/scalebench-run, env.sh); SPECS: folder with the run files.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
SPECS=${SPECS:-docs/results/2026-11-22-train-2xh200/specs}
W=$OUT/train; mkdir -p $W
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.max.sm,power.limit --format=csv > $W/gpu.txt 2>&1
nvidia-smi topo -m >> $W/gpu.txt 2>&1
t nvlink_ok 60 $E mpirun -np 2 scalebench-run --spec $SPECS/tiny-nvlink.json --emit records
NCCL_P2P_DISABLE=1 t pcie_ok 60 $E mpirun -np 2 -x NCCL_P2P_DISABLE scalebench-run --spec $SPECS/tiny-pcie.json --emit records
t pcie_but_p2p 60 $E mpirun -np 2 scalebench-run --spec $SPECS/tiny-pcie.json --emit records
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
for round in 1 2; do
  for p in fp16 bf16; do
    for g in 0 1; do
      CUDA_VISIBLE_DEVICES=$g t ${p}_np1_gpu${g}_r$round 60 $E mpirun -np 1 -x CUDA_VISIBLE_DEVICES scalebench-run train -p precision=$p $P
    done
    for c in 0 8; do
      t ${p}_np2_c${c}_r$round 60 $E mpirun -np 2 scalebench-run train -p precision=$p -p comm_ctas=$c $P
    done
  done
done
for p in fp16 bf16; do
  NCCL_P2P_DISABLE=1 t ${p}_np2_pcie 60 $E mpirun -np 2 -x NCCL_P2P_DISABLE scalebench-run train -p precision=$p -p comm_ctas=8 $P
done
