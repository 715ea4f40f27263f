#!/bin/bash
# The hbm, burn and checksum workloads on one GPU, with their GPU unit tests. Run from the
# repository root with B pointing at the bundle's env.sh and OUT at a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== unit tests"; timeout 120 $B scalebench-unit-tests --gtest_filter='Stress*' 2>&1 | tail -8
for op in read write copy triad; do
  echo "== hbm $op"; timeout 60 $B mpirun -np 1 scalebench-run hbm -p op=$op --emit records > "$OUT/hbm-$op.jsonl"; echo "rc=$?"
  python3 -c "import json,sys
for l in open(sys.argv[1]):
  r=json.loads(l.split(' ',1)[1])
  if r['metric']=='throughput': print(r['point'], round(r['value'],1), r['unit'], 'peak', round(r['peak']['value'],1), 'pct', round(r['pct_of_peak'],1), 'cv', round(r['stats']['cv'],4), 'n', r['stats']['n'], 'wrong', r['correctness']['wrong'])" "$OUT/hbm-$op.jsonl"
done
echo "== checksum"; timeout 60 $B mpirun -np 1 scalebench-run checksum --emit records > "$OUT/checksum.jsonl"; echo "rc=$?"
grep -o '"metric":"checksum".*' "$OUT/checksum.jsonl" | grep -o '"checksum":"[0-9a-f]*"\|"status":"[a-z]*"' | head
echo "== checksum again (another process)"; timeout 60 $B mpirun -np 1 scalebench-run checksum --emit records | grep -o '"checksum":"[0-9a-f]*"' | head -1
for t in gemm hbm; do
  echo "== burn $t 20 s"; timeout 90 $B mpirun -np 1 scalebench-run burn -p target=$t -p duration_s=20 --emit records > "$OUT/burn-$t.jsonl"; echo "rc=$?"
  python3 -c "import json,sys
for l in open(sys.argv[1]):
  r=json.loads(l.split(' ',1)[1])
  if r['metric'] in ('throughput','decay'):
    d=r.get('details',{}); print(r['metric'], round(r['value'],4), r['unit'], 'n', r['stats']['n'], 'status', r['status'], 'min_clock', d.get('min_sm_clock_mhz'), 'max_power', d.get('max_power_w'), 'limits', d.get('clock_limits'))" "$OUT/burn-$t.jsonl"
done
echo "== table mode"; timeout 60 $B mpirun -np 1 scalebench-run hbm -p bytes=256MiB
