#!/bin/bash
# Small-message latency with CUDA-graph launches at 2 GPUs, every collective, over NVLink and with
# P2P off (NCCL through host memory), against nccl-tests in the same call. Same method as
# ../2026-11-22-collective-latency-graph-4xh200/run.sh: each process times 5 windows of 5 warm-up
# + 20 timed operations per size (nccl-tests -w 5 -n 20 -N 5 -G 1; scalebench --repetitions 5,
# cuda_graph=true), the two tools alternate ROUNDS times per case (A B A B ...).
# TRANSPORTS (default "nvlink pcie"), CASES and N (GPUs, default 2) narrow or widen the run.
# From the repository root: B=BUNDLE run.sh OUT [ROUNDS]; BUNDLE holds bin/scalebench-run, the
# nccl-tests binaries (*_perf, built from its public source) and env.sh.
set -u
OUT=${1:?output folder}
ROUNDS=${2:-3}
B=${B:?bundle folder}
N=${N:-2}
CASES=${CASES:-"all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv"}
mkdir -p "$OUT"
for transport in ${TRANSPORTS:-nvlink pcie}; do
  p2p=0; [ "$transport" = pcie ] && p2p=1
  for op in $CASES; do
    for round in $(seq 1 "$ROUNDS"); do
      NCCL_P2P_DISABLE=$p2p timeout 60 "$B/env.sh" mpirun -np "$N" --bind-to none -x NCCL_P2P_DISABLE \
        "${op}_perf" -b 8 -e 64K -f 2 -w 5 -n 20 -N 5 -c 0 -G 1 \
        > "$OUT/nccl-tests-$op-np$N-$transport-r$round.txt" 2>&1
      NCCL_P2P_DISABLE=$p2p timeout 60 "$B/env.sh" mpirun -np "$N" --bind-to none -x NCCL_P2P_DISABLE \
        scalebench-run collective -p backend=nccl -p op="$op" \
        -p min_bytes=8 -p max_bytes=64KiB -p warmup=5 -p iters=20 -p check=false -p cuda_graph=true --repetitions 5 \
        > "$OUT/scalebench-$op-np$N-$transport-r$round.txt" 2>&1
    done
  done
done
