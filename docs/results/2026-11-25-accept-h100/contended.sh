#!/bin/bash
# Call 2 of 2 on one GPU: the quick level on the clean GPU (its time), then the same with a
# competing bf16 GEMM process started beside it (it must fail the GEMM and HBM checks and say
# why), then the gpt workload's checks on the merged code. Run from the repository root with B
# pointing at the bundle's env.sh and OUT at a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$SECONDS
timeout 120 $B scalebench accept --level quick --db "$OUT/quick.db" --json "$OUT/quick.json" >"$OUT/quick.log" 2>&1
echo "== quick, clean: exit $? in $((SECONDS - t0)) s"; cat "$OUT/quick.log"
# The competitor: a bf16 GEMM burn from another process, long enough to cover the battery.
setsid $B mpirun -np 1 scalebench-run burn -p target=gemm -p duration_s=150 >"$OUT/competitor.log" 2>&1 &
competitor=$!
sleep 8
t0=$SECONDS
timeout 150 $B scalebench accept --level quick --db "$OUT/contended.db" --json "$OUT/contended.json" >"$OUT/contended.log" 2>&1
echo "== quick, beside a competing GEMM: exit $? in $((SECONDS - t0)) s"; cat "$OUT/contended.log"
kill -TERM -- -"$competitor" 2>/dev/null; wait "$competitor" 2>/dev/null; sleep 2
nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader
echo "== gpt gradcheck"; timeout 120 $B scalebench-gpt-check gradcheck | tail -c 400; echo "rc=$?"
echo "== gpt time 124M"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 | head -c 400; echo; echo "rc=$?"
