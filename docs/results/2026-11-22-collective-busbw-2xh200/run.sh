#!/bin/bash
# Bus bandwidth at 64 MiB-1 GiB at 2 GPUs, every collective, over NVLink and with P2P off (NCCL
# through host memory), against nccl-tests in the same call, the two tools alternating ROUNDS
# times per case (A B A B ...) so that drift between processes falls on both. Each process: one
# window of 5 warm-up + 20 timed operations per size, as nccl-tests times (-w 5 -n 20; scalebench
# -p warmup=5 -p iters=20 --repetitions 1), out of place, float32, data checks off in both (the
# other records of these collectives check their data).
# With ABBA=1 the tool that goes first alternates too (even rounds start with scalebench), so
# that whatever the first process of a pair leaves behind (host memory, clocks) falls on both.
# TRANSPORTS (default "nvlink pcie") and CASES narrow the run.
# From the repository root: B=BUNDLE run.sh OUT [ROUNDS]; BUNDLE holds bin/scalebench-run, the
# nccl-tests binaries (*_perf, built from its public source) and env.sh.
set -u
OUT=${1:?output folder}
ROUNDS=${2:-3}
B=${B:?bundle folder}
N=${N:-2}
CASES=${CASES:-"all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv"}
mkdir -p "$OUT"
ABBA=${ABBA:-0}
for transport in ${TRANSPORTS:-nvlink pcie}; do
  p2p=0; [ "$transport" = pcie ] && p2p=1
  for op in $CASES; do
    for round in $(seq 1 "$ROUNDS"); do
      peer() {
        NCCL_P2P_DISABLE=$p2p timeout 90 "$B/env.sh" mpirun -np "$N" --bind-to none -x NCCL_P2P_DISABLE \
          "${op}_perf" -b 64M -e 1G -f 2 -w 5 -n 20 -c 0 \
          > "$OUT/nccl-tests-$op-np$N-$transport-r$round.txt" 2>&1
      }
      ours() {
        NCCL_P2P_DISABLE=$p2p timeout 90 "$B/env.sh" mpirun -np "$N" --bind-to none -x NCCL_P2P_DISABLE \
          scalebench-run collective -p backend=nccl -p op="$op" \
          -p min_bytes=64MiB -p max_bytes=1GiB -p warmup=5 -p iters=20 -p check=false --repetitions 1 \
          > "$OUT/scalebench-$op-np$N-$transport-r$round.txt" 2>&1
      }
      if [ "$ABBA" = 1 ] && [ $((round % 2)) = 0 ]; then ours; peer; else peer; ours; fi
    done
  done
done
