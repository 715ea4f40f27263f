#!/bin/bash
# Issue 44's three coordinator goals, one after the other on a quiet 2-core machine (nothing else
# running), from the repository root with a build's programs in build/bin:
#   1. the soak: 30 minutes at 2,000 agents x 8 GPUs, churn, a study submitted and cancelled each
#      minute, a SIGKILL restart at 15 minutes; the coordinator on CPU 0, the played cluster on
#      CPU 1; its store grows to about 3 GB in TMPDIR;
#   2. twice, 8 processes reading every run of a 100,000-run experiment for 60 s, the coordinator
#      under `ulimit -v 1048576` (bench/heartbeat_during.py get8x60);
#   3. five times, the load bench at 4,000 agents x 8 GPUs, 20 s of streaming, the coordinator on
#      CPU 0 and the bench on CPU 1.
# Each writes its log to OUT (default .).
OUT=${OUT:-.}
export PATH=$PWD/build/bin:$PATH
{ nproc; uptime; df -h "${TMPDIR:-/tmp}" | tail -1
  taskset -c 1 scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"; uptime; } >"$OUT/soak-30m.log" 2>&1
for i in 1 2; do
  { echo "== get8x60 run $i $(date -u)"; uptime
    python3 bench/heartbeat_during.py build/bin/scalebench-coordinator get8x60; echo "rc=$?"; uptime; }
done >"$OUT/get8x60.log" 2>&1
{ nproc; uptime
  for i in 1 2 3 4 5; do
    echo "== run $i $(date -u)"
    taskset -c 1 scalebench-coordinator-load --agents 4000 --gpus 8 --duration 20 --coordinator-cpus 0; echo "rc=$?"; uptime
  done; } >"$OUT/load-4000x8.log" 2>&1
