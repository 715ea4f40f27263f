#!/bin/bash
# Call 5 on one H200: why mpirun placed every rank on the launching host of the GPU machine's
# testbed in call 4 (Open MPI's settings there, and mpirun across two hosts by hand), then call 4's
# part (B) with the variant's environment where study files take it.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
tb() { $B scalebench testbed "$@"; }
on() { $B scalebench testbed exec "$@"; }
env | grep -E "^(OMPI|PMIX|OPAL|HWLOC)" | sort
cat /etc/openmpi/openmpi-mca-params.conf 2>/dev/null | grep -v "^#" | grep . ; ompi_info --version | head -1
timeout 60 $B scalebench testbed up 2 --launcher nsenter --no-slurm --gpus node1=0 --gpus node2=0 > "$OUT/raw/up.txt"; tail -3 "$OUT/raw/up.txt"
on node1 bash -c 'hostname; cat /etc/hosts; timeout 30 mpirun --allow-run-as-root -np 2 --host node1,node2 --display-allocation --mca plm_base_verbose 5 hostname 2>&1 | tail -25'
cat > "$OUT/shared.yaml" <<'YAML'
name: shared-gpu-net
workload: collective
params: {backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 256MiB, step_factor: 4, time_cap_s: 0.3}
placement: {nodes: 2, ranks_per_node: 1}
variants:
  net: {transport: net, env: {NCCL_DEBUG: INFO, NCCL_DEBUG_SUBSYS: "INIT,NET", NCCL_SOCKET_IFNAME: eth0}}
repetitions: 10
timeout: 2m
YAML
on head scalebench submit "$OUT/shared.yaml"
timeout 150 $B scalebench testbed exec head -- scalebench wait shared-gpu-net --timeout 140 | tail -n 1
on head scalebench results --experiment shared-gpu-net --format json > "$OUT/raw/shared-gpu-net.jsonl"
python3 - "$OUT/raw/shared-gpu-net.jsonl" <<'PY' | head -12
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["status"], r["metric"], r.get("point", {}).get("size"), r["value"], r.get("transport"), r["reason"][:400])
PY
tb down --save "$OUT/raw/shared-testbed" > /dev/null
grep -h "NCCL INFO" "$OUT"/raw/shared-testbed/node*/agent/run-*.log | grep -E "NET/|via|Using|Duplicate|Channel 00" | sed 's/^[^ ]* //' | sort | uniq -c | head -20
tar -C "$OUT/raw" -czf "$OUT/raw/shared-testbed.tar.gz" shared-testbed && rm -rf "$OUT/raw/shared-testbed"
