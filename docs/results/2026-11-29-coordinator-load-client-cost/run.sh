#!/bin/bash
# The load bench at 4,000 agents x 8 GPUs with each side on a core of its own: the coordinator on
# CPU 0 (--coordinator-cpus 0), the bench (the played agents) on CPU 1. OLD = a build of main
# before the bench's records were rendered once (its bin/ folder), NEW = this branch's bin/.
# Five runs of the new bench; two of the old one, alternating with the new one's first two.
OLD=${OLD:?the bin/ folder of main's build} NEW=${NEW:-build/bin}
for i in 1 2; do
  echo "### main's bench, run $i; $(uptime)"
  taskset -c 1 "$OLD/scalebench-coordinator-load" --agents 4000 --gpus 8 --duration 20 --coordinator-cpus 0; echo "rc=$?"
  echo "### this branch's bench, run $i; $(uptime)"
  taskset -c 1 "$NEW/scalebench-coordinator-load" --agents 4000 --gpus 8 --duration 20 --coordinator-cpus 0; echo "rc=$?"
done
for i in 3 4 5; do
  echo "### this branch's bench, run $i; $(uptime)"
  taskset -c 1 "$NEW/scalebench-coordinator-load" --agents 4000 --gpus 8 --duration 20 --coordinator-cpus 0; echo "rc=$?"
done
echo "### end; $(uptime)"
