#!/bin/bash
# After the last refactor's merge: every GPU unit test (4 shards, one per GPU), then the workloads
# whose host code moved, each on its own GPU.
B=${B:-.gpu-bundle/env.sh}
for i in 0 1 2 3; do
  CUDA_VISIBLE_DEVICES=$i GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 120 $B scalebench-unit-tests \
    --gtest_filter='*Gpu*:GptText*:-TopologyNvml.*:NodeCheck.*:GpuTelemetryNvml.*:ClockLimits.*' > $OUT/unit-$i.log 2>&1 &
done
wait
grep -hE "^\[  (PASSED|FAILED|SKIPPED) " $OUT/unit-*.log | sort | uniq -c
grep -h -B2 -A6 "Failure" $OUT/unit-*.log | head -30
run() { local gpu=$1; shift; CUDA_VISIBLE_DEVICES=$gpu timeout 60 $B mpirun -np 1 --allow-run-as-root scalebench-run "$@" > $OUT/$1.log 2>&1; echo "$* rc=$?"; }
run 0 conv -p shapes=64x64x3x3@56x56:p1 -p pass=fwd -p precision=fp16 --repetitions 5 --format json &
run 1 gemm -p precision=bf16 -p sizes=4096 &
run 2 rnn --repetitions 3 &
run 3 train -p model=tiny --repetitions 3 &
wait
run 0 copy
python3 - $OUT/conv.log <<'PY'
import json, sys
for l in open(sys.argv[1]):
    i = l.find("{")
    if i < 0: continue
    try: r = json.loads(l[i:])
    except ValueError: continue
    if r.get("metric") == "throughput":
        print("conv", r["details"].get("timing"), r["details"].get("graph_problem"), r["correctness"]["passed"], round(r["stats"]["median"], 1), r["unit"])
PY
for f in gemm rnn train copy; do tail -4 $OUT/$f.log | cut -c1-200; done
