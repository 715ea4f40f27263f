#!/bin/bash
# call 1: stepgraph GPU test + cuda_graph tokens/s on/off, then main's GPU tests
# B (as G and M): a bundle with the graph branch's scalebench-run and its unit tests as scalebench-unit-tests-graph, and main's scalebench-unit-tests; S: the folder with summ.py (2026-11-27-gpt-parallel-h200's)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
G=${B:-.gpu-bundle/env.sh}; M=$G; S=$(dirname "$0")/../2026-11-27-gpt-parallel-h200
L=$OUT/logs; mkdir -p $L
echo "== graph GPU tests"
timeout 200 $G scalebench-unit-tests-graph --gtest_filter='GptGpu.*' > $L/graph-tests.log 2>&1; echo "rc=$?"
grep -E "^\[  (FAILED|PASSED) |^\[       OK|tests ran" $L/graph-tests.log | tail -40
C="-p seq=1024 -p warmup=3 -p steps=10 --repetitions 5 --format json"
run() { name=$1; shift; timeout 150 $G mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run gpt $C "$@" > $L/$name.json 2> $L/$name.err || { echo "$name rc=$?"; tail -5 $L/$name.err; }; }
run 124m_eager_a -p model=gpt2-124m -p micro_batch=16 -p cuda_graph=false
run 124m_graph_a -p model=gpt2-124m -p micro_batch=16 -p cuda_graph=true
run 124m_eager_b -p model=gpt2-124m -p micro_batch=16 -p cuda_graph=false
run 124m_graph_b -p model=gpt2-124m -p micro_batch=16 -p cuda_graph=true
python3 $S/summ.py $L/*.json
echo "== main GPU tests"
timeout 330 $M scalebench-unit-tests --gtest_filter='GptGpu*:GptRecomputeGpu*:GptTextGpu*:GptGpuTp*:TrainGpu*:TtaGpu*:StressGpu*' > $L/main-tests.log 2>&1; echo "rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests ran|Failure" $L/main-tests.log | tail -30
