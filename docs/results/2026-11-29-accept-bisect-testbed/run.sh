#!/usr/bin/env bash
# `scalebench accept` naming a bad link on a testbed of 4 hosts (network namespaces with sshd and an
# agent each; root, iproute2 and sshd needed): node3's link shaped to 2 ms and 1% loss, the band of
# the all-reduce between nodes 0.8 of the same all-reduce measured on the clean testbed, then the
# quick battery with its bisection. Usage: run.sh OUT_DIR (BIN: the folder of the programs, default
# build/bin). Writes OUT_DIR/{up.txt,baseline.jsonl,accept.txt,accept.json,down.txt}.
set -euo pipefail
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
BIN=${BIN:-$(pwd)/build/bin}
export SCALEBENCH_TESTBED_DIR=${SCALEBENCH_TESTBED_DIR:-/var/tmp/scalebench-testbed}
tb() { "$BIN/scalebench" testbed --name accept "$@"; }
trap 'tb down --save "$OUT/saved" >"$OUT/down.txt" 2>&1 || true' EXIT
tb up 4 --no-slurm --slots 1 | tee "$OUT/up.txt"
cat >"$OUT/baseline.yaml" <<'YAML'
name: baseline
workload: collective
params: {op: all_reduce, min_bytes: 4MiB, max_bytes: 4MiB, step_factor: 1, time_cap_s: 1}
placement: {nodes: 4, ranks_per_node: 1}
repetitions: 20
YAML
tb exec head scalebench submit "$OUT/baseline.yaml"
tb exec head scalebench wait baseline --timeout 120
tb exec head scalebench results --experiment baseline --format json >"$OUT/baseline.jsonl"
cat >"$OUT/site.yaml" <<'YAML'
rules:
  - name: all-reduce-busbw
    select: {workload: collective, metric: busbw}
    band: {from: baseline, fraction: 0.8, match: [size]}
YAML
tb shape node3 --delay 2ms --loss 1%
set +e
tb exec head scalebench accept --level quick --rules "$OUT/site.yaml" --baseline "$OUT/baseline.jsonl" \
  --json "$OUT/accept.json" 2>&1 | tee "$OUT/accept.txt"
echo "exit ${PIPESTATUS[0]}" | tee -a "$OUT/accept.txt"
