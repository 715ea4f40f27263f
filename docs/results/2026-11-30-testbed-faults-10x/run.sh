#!/bin/bash
# tests/integration/testbed_faults.sh ten times in a row (issue 43: each fault test 10 of 10, no
# record lost or stored twice). Each run makes a fresh testbed of 3 nodes and head, cuts a worker
# host mid-run, cuts the coordinator's host for 60 s, reboots a host mid-run, checks every record
# once, and takes the testbed down. Run as root from anywhere:
#   SCALEBENCH_BIN=build/bin bash docs/results/2026-11-30-testbed-faults-10x/run.sh OUTDIR
src=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
export SCALEBENCH_SRC=$src SCALEBENCH_BIN=${SCALEBENCH_BIN:-$src/build/bin}
uptime
for i in $(seq 1 10); do
  start=$SECONDS
  bash "$src/tests/integration/testbed_faults.sh" > "$out/run-$i.txt" 2>&1
  rc=$?
  echo "run $i: exit $rc in $((SECONDS - start)) s, load $(cut -d' ' -f1 /proc/loadavg)"
  grep "^testbed_faults:" "$out/run-$i.txt" | sed 's/^/  /'
done
