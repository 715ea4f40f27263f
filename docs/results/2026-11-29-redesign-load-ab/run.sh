#!/bin/bash
# The coordinator load bench at 1,000 agents x 8 GPUs, 20 s of streaming, the coordinator on CPU 0
# and the bench on CPU 1: main's programs (MAIN=.../bin) and the change's (CHANGE=.../bin) back to
# back, four pairs, the order swapped after two.
for i in 1 2 3 4; do
  if ((i <= 2)); then order="MAIN CHANGE"; else order="CHANGE MAIN"; fi
  for side in $order; do
    B=${!side}
    echo "== $side run $i $(uptime)"
    taskset -c 1 "$B/scalebench-coordinator-load" --agents 1000 --gpus 8 --duration 20 --coordinator-cpus 0 2>&1 |
      grep -E "^ingest|^heartbeat|^CPU|RSS"
  done
done
