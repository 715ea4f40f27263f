#!/bin/bash
# Call 9 on one H200, the session's last: (A) predict, then verify again on 4 host-memory hosts with
# 10 Gbit/s links, Open MPI's all_reduce forced to its ring algorithm (call 8 let it choose: at 3
# ranks it picked another algorithm than at 2 and 4, which no ring model follows); (B) the GPU
# regression study against the accepted baseline, the session's closing run.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
tb() { $B scalebench testbed "$@"; }
on() { $B scalebench testbed exec "$@"; }
echo "== (A) predict, then verify: ring all_reduce, 4 hosts, every link 10 Gbit/s"; start=$SECONDS
cat > "$OUT/fit.yaml" <<'YAML'
name: ring-2-3
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 1MiB, max_bytes: 64MiB, step_factor: 2, time_cap_s: 1}
placement: {nodes: [2, 3], ranks_per_node: 1}
variants:
  ring: {env: {OMPI_MCA_coll_tuned_use_dynamic_rules: "1", OMPI_MCA_coll_tuned_allreduce_algorithm: "4"}}
repetitions: 10
YAML
sed -e 's/name: ring-2-3/name: ring-4/' -e 's/nodes: \[2, 3\]/nodes: [4]/' "$OUT/fit.yaml" > "$OUT/four.yaml"
timeout 60 $B scalebench testbed up 4 --launcher nsenter --no-slurm --slots 1 > "$OUT/raw/up.txt"
for n in node1 node2 node3 node4; do tb shape $n --rate 10gbit; done
on head scalebench submit "$OUT/fit.yaml"
timeout 200 $B scalebench testbed exec head -- scalebench wait ring-2-3 --timeout 190 | tail -n 1
on head scalebench predict --experiment ring-2-3 --nodes 4 | tee "$OUT/raw/predict.txt"
on head scalebench submit "$OUT/four.yaml"
timeout 150 $B scalebench testbed exec head -- scalebench wait ring-4 --timeout 140 | tail -n 1
on head scalebench predictions | tee "$OUT/raw/predictions.txt"
on head scalebench predictions --format json > "$OUT/raw/predictions.json"
for e in ring-2-3 ring-4; do on head scalebench results --experiment $e --format json > "$OUT/raw/$e.jsonl"; done
on head scalebench report --experiment ring-4 --out "$OUT/raw/report-ring-4" > /dev/null 2>&1
grep -A3 -i "predicted against measured" "$OUT/raw/report-ring-4/report.md" | head -8
echo "(A): $((SECONDS - start)) s"
tb down --save "$OUT/raw/predict-testbed" > /dev/null

echo "== (B) regression study against the accepted baseline"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"
cp "$OUT/raw/gr/compare.txt" "$OUT/gr-compare.txt"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
