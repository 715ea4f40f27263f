#!/bin/bash
# Call 10 on one H200: call 9's predict, then verify again, on a fresh testbed, with the model of a
# bus bandwidth per size B(S) (7d958ca; designed after call 9's data, so scored here on new runs).
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

tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
