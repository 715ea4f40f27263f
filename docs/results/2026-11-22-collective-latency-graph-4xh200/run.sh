#!/bin/bash
# Small-message latency with CUDA-graph launches (nccl-tests -G 1, scalebench cuda_graph=true), against nccl-tests on the same GPUs in the same call,
# like for like: each process times 5 windows of 5 warm-up + 20 timed operations per size
# (nccl-tests -w 5 -n 20 -N 5, printing every cycle; scalebench --repetitions 5), and the two
# tools alternate ROUNDS times per case (A B A B ...) so that drift between processes (clocks,
# NCCL's channel set-up) falls on both. From the repository root: B=BUNDLE run.sh OUT [ROUNDS],
# where BUNDLE holds bin/scalebench-run, the nccl-tests binaries (*_perf, built from its public
# source) and env.sh.
set -u
OUT=${1:?output folder}
ROUNDS=${2:-5}
B=${B:?bundle folder}
mkdir -p "$OUT"
for case in sendrecv:2 all_reduce:2 reduce:4 broadcast:4 all_reduce:4 all_gather:4; do
  op=${case%:*}; n=${case#*:}
  for round in $(seq 1 "$ROUNDS"); do
    timeout 60 "$B/env.sh" mpirun -np "$n" --bind-to none "${op}_perf" -b 8 -e 64K -f 2 -w 5 -n 20 -N 5 -c 0 -G 1 \
      > "$OUT/nccl-tests-$op-np$n-r$round.txt" 2>&1
    timeout 60 "$B/env.sh" mpirun -np "$n" --bind-to none scalebench-run collective -p backend=nccl -p op="$op" \
      -p min_bytes=8 -p max_bytes=64KiB -p warmup=5 -p iters=20 -p check=false -p cuda_graph=true --repetitions 5 \
      > "$OUT/scalebench-$op-np$n-r$round.txt" 2>&1
  done
done
