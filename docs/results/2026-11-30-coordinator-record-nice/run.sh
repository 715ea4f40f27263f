#!/bin/bash
# Issue 44's two open figures with the record threads at a lower CPU priority (--record-nice 5,
# the default now), on the quiet 2-core machine, the coordinator on CPU 0 and the played cluster
# on CPU 1: the load bench at 4,000 agents x 8 GPUs five times (goal: >= 50k records/s, heartbeat
# p99 < 10 ms, RSS < 256 MB, 5 of 5), then the 30-minute soak (goal: RSS, heartbeat p99 and
# records/s of the last 5 minutes within 10% of the first 5; 0 lost, 0 duplicated). Its store
# grows to about 3 GB in TMPDIR. Programs from PATH (build-host/bin).
set -u
nproc; uptime; df -h "${TMPDIR:-/tmp}" | tail -1
for i in 1 2 3 4 5; do
  echo "== load bench $i of 5"
  taskset -c 1 scalebench-coordinator-load --agents 4000 --duration 30 --coordinator-cpus 0; echo "rc=$?"
done
echo "== soak"
taskset -c 1 scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"
uptime
