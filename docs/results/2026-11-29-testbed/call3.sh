#!/bin/bash
# Call 3 on one H200, the session's last: the testbed on the GPU machine (no sshd or SLURM there:
# --launcher nsenter --no-slurm, ip and tc carried), a mixed cluster: node1 holds the GPU, node2
# and node3 host memory only; a GPU study must land on node1 alone. Then the GPU regression study
# against the accepted baseline (the session's closing run).
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
tb() { $B scalebench testbed "$@"; }
# The study files where every host sees them (each host has its own /tmp).
cat > "$OUT/mixed-gpu.yaml" <<'YAML'
name: mixed-gpu
workload: collective
params: {backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 64MiB, step_factor: 4, time_cap_s: 0.3}
placement: {ranks_per_node: 1}
repetitions: 10
YAML
cat > "$OUT/mixed-gemm.yaml" <<'YAML'
name: mixed-gemm
workload: gemm
params: {precision: bf16, sizes: 4096, shapes: square}
placement: {ranks_per_node: 1}
YAML
cat > "$OUT/mixed-host.yaml" <<'YAML'
name: mixed-host
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 1MiB, max_bytes: 16MiB, step_factor: 4, time_cap_s: 0.3}
placement: {ranks_per_node: 2}
repetitions: 5
YAML
echo "== mixed cluster: node1 has the GPU, node2 and node3 host memory"; start=$SECONDS
timeout 60 $B scalebench testbed up 3 --launcher nsenter --no-slurm --gpus node1=0 2>&1 | tee "$OUT/raw/up-mixed.txt"
for e in mixed-gpu mixed-gemm mixed-host; do tb exec head -- scalebench submit "$OUT/$e.yaml"; done
for e in mixed-gpu mixed-gemm mixed-host; do
  timeout 120 $B scalebench testbed exec head -- scalebench wait $e --timeout 100 | tail -n 1
  tb exec head -- scalebench results --experiment $e --format json > "$OUT/raw/$e.jsonl"
done
tb exec head -- scalebench status
tb exec head -- scalebench agents
tb exec head -- curl -s http://198.18.0.1:8470/api/v1/agents > "$OUT/raw/agents-mixed.json" 2>/dev/null
python3 - "$OUT/raw" <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/mixed-*.jsonl")):
    rs = [json.loads(l) for l in open(f) if l.strip()]
    ok = [r for r in rs if r["status"] == "ok"]
    hosts = sorted({h for r in rs for h in r.get("placement", {}).get("hosts", [])})
    machines = sorted({b.get("machine") for r in ok for b in r["environment"].get("binding", [])})
    gpus = sorted({d.get("gpu", "-") for r in ok for d in r["placement"].get("devices", [])})
    print(f"{f.split('/')[-1]}: {len(ok)}/{len(rs)} ok, hosts {hosts}, machines {machines}, GPUs {gpus}")
PY
echo "mixed cluster: $((SECONDS - start)) s"
tb down --save "$OUT/raw/mixed-testbed"
tar -C "$OUT/raw" -czf "$OUT/raw/mixed-testbed.tar.gz" mixed-testbed && rm -rf "$OUT/raw/mixed-testbed"

[[ ${SKIP_REGRESSION:-} ]] && exit 0
echo "== regression study against the accepted baseline"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"
cp "$OUT/raw/gr/compare.txt" "$OUT/raw/gr-compare.txt"; cp "$OUT/raw/gr/records.jsonl.gz" "$OUT/raw/gr-records.jsonl.gz"
