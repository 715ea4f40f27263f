#!/bin/bash
# The load bench's goal on a quiet machine (issue 44): 4,000 agents x 8 GPUs, the coordinator on
# CPU 2 (--coordinator-cpus 2) and the bench on CPU 3 (taskset), five runs, each 20 s of streaming
# after the 4,000 registrations. The machine is a 16-core host with nothing else running: two of
# its cores stand for the 2-core machine of the goal. Run from the repository root: B = the
# bundle's env.sh (programs and the libraries they need).
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT"
nproc; uptime; grep -m1 "model name" /proc/cpuinfo
for i in 1 2 3 4 5; do
  echo "### run $i; $(uptime)"
  taskset -c 3 $B scalebench-coordinator-load --agents 4000 --gpus 8 --duration 20 --coordinator-cpus 2; echo "rc=$?"
done 2>&1 | tee "$OUT/load.log"
echo "### end; $(uptime)"
