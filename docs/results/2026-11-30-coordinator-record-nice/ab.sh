#!/bin/bash
# A/B of the coordinator's --record-nice: PAIRS pairs of load-bench runs at AGENTS x 8 GPUs for DUR s, the values of
# LIST (default 0 and N) back to back, coordinator on CPU 0, bench on CPU 1. BIN: the programs folder.
BIN=${BIN:-build-host/bin}
N=${N:-5}; PAIRS=${PAIRS:-3}; AGENTS=${AGENTS:-4000}; DUR=${DUR:-20}
for p in $(seq 1 $PAIRS); do
  for nice in ${LIST:-0 $N}; do
    echo "== pair $p record-nice $nice load $(cut -d' ' -f1 /proc/loadavg)"
    taskset -c 1 $BIN/scalebench-coordinator-load --agents $AGENTS --duration $DUR --coordinator-cpus 0 --coordinator-arg=--record-nice --coordinator-arg=$nice 2>&1 | grep -E "^ingest|^heartbeat|RSS|CPU" | cut -c1-220
  done
done
