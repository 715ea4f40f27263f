#!/bin/bash
# Hypothesis: the 6 us / 9 us per-process latency modes come from where the host thread runs.
B=$1; OUT=$2; mkdir -p $OUT
lscpu > $OUT/lscpu.txt; nvidia-smi topo -m > $OUT/topo.txt 2>&1
for i in 0 1 2 3; do bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i $i | tr 'A-Z' 'a-z' | sed 's/^0000//'); echo "$i $bus $(cat /sys/bus/pci/devices/$bus/local_cpulist) numa $(cat /sys/bus/pci/devices/$bus/numa_node)"; done > $OUT/gpu-cpus.txt
for case in all_reduce:2 broadcast:4; do
  op=${case%:*}; n=${case#*:}
  for round in 1 2 3 4 5 6; do
    timeout 60 $B/env.sh mpirun -np $n --bind-to none ${op}_perf -b 8 -e 64K -f 4 -w 5 -n 20 -N 5 -c 0 > $OUT/nccl-tests-none-$op-np$n-r$round.txt 2>&1
    timeout 60 $B/env.sh mpirun -np $n --bind-to none $B/tools/gpu_local.sh ${op}_perf -b 8 -e 64K -f 4 -w 5 -n 20 -N 5 -c 0 > $OUT/nccl-tests-local-$op-np$n-r$round.txt 2>&1
    timeout 60 $B/env.sh mpirun -np $n --bind-to none $B/tools/gpu_local.sh scalebench-run collective -p backend=nccl -p op=$op -p min_bytes=8 -p max_bytes=64KiB -p step_factor=4 -p warmup=5 -p iters=20 -p check=false --repetitions 5 > $OUT/scalebench-local-$op-np$n-r$round.txt 2>&1
  done
done
