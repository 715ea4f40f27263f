#!/bin/bash
# Small-message latency, scalebench-run against nccl-tests side by side (same GPUs, same call,
# interleaved twice), 8 B to 64 KiB, 5 warm-up and 20 timed operations per window as nccl-tests'
# -w 5 -n 20; then one full all_reduce sweep to 1 GiB with the (GPU-side) correctness check on,
# timed end to end. From the repository root: B=BUNDLE run.sh OUT, where BUNDLE holds
# bin/scalebench-run, the nccl-tests binaries (*_perf, built from its public source) and env.sh.
set -u
OUT=${1:?output folder}
B=${B:?bundle folder}
mkdir -p "$OUT"
for case in sendrecv:2 all_reduce:2 reduce:4 broadcast:4 all_reduce:4 all_gather:4; do
  op=${case%:*}; n=${case#*:}
  for round in 1 2; do
    timeout 60 "$B/env.sh" mpirun -np "$n" --bind-to none "${op}_perf" -b 8 -e 64K -f 2 -w 5 -n 20 -c 0 \
      > "$OUT/nccl-tests-$op-np$n-r$round.txt" 2>&1
    timeout 60 "$B/env.sh" mpirun -np "$n" --bind-to none scalebench-run collective -p backend=nccl -p op="$op" \
      -p min_bytes=8 -p max_bytes=64KiB -p warmup=5 -p iters=20 -p check=false --repetitions 5 \
      > "$OUT/scalebench-$op-np$n-r$round.txt" 2>&1
  done
done
start=$(date +%s%N)
timeout 120 "$B/env.sh" mpirun -np 4 --bind-to none scalebench-run collective -p backend=nccl -p op=all_reduce \
  -p min_bytes=8 -p max_bytes=1GiB -p step_factor=8 --repetitions 10 > "$OUT/scalebench-all_reduce-np4-checked.txt" 2>&1
echo "rc=$? wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))" >> "$OUT/scalebench-all_reduce-np4-checked.txt"
