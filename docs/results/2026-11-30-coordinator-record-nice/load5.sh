#!/bin/bash
# Issue 44's load-bench goal with the coordinator's defaults (--record-nice 0) and the bench's
# record threads below its heartbeat threads: 4,000 x 8, coordinator on CPU 0, client on CPU 1,
# five runs of 30 s (goal: >= 50k records/s, heartbeat p99 < 10 ms, RSS < 256 MB, 5 of 5).
uptime
for i in 1 2 3 4 5; do
  echo "== load bench $i of 5"
  taskset -c 1 scalebench-coordinator-load --agents 4000 --duration 30 --coordinator-cpus 0; echo "rc=$?"
done
uptime
