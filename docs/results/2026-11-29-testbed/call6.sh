#!/bin/bash
# Call 4 on one H200 (as run in call 8, after the testbed's agents were given OMPI_MCA_plm=rsh and the nsenter launcher entered hosts through their init process:
# the GPU machine sets OMPI_MCA_plm=isolated, which kept every rank on the launching host): (A) predict, then verify on a testbed of 4 host-memory hosts whose links are
# shaped to 10 Gbit/s (tbf; this kernel has no netem): all_reduce measured at 2 and 3 nodes,
# `scalebench predict --nodes 4`, then the 4-node run scores it; (B) two hosts given the same GPU:
# does NCCL form one communicator across two UTS namespaces, over NET? (C) the convolution point
# that failed its reference at the end of calls 2 and 3a, in 4 fresh processes, with clocks.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
tb() { $B scalebench testbed "$@"; }
on() { $B scalebench testbed exec "$@"; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.sm,temperature.gpu,driver_version --format=csv | tee "$OUT/raw/gpu.txt"

echo "== (A) predict, then verify: 4 hosts, every link 10 Gbit/s"; start=$SECONDS
cat > "$OUT/fit.yaml" <<'YAML'
name: ar-2-3
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 1MiB, max_bytes: 64MiB, step_factor: 4, time_cap_s: 1}
placement: {nodes: [2, 3], ranks_per_node: 1}
repetitions: 10
YAML
sed -e 's/name: ar-2-3/name: ar-4/' -e 's/nodes: \[2, 3\]/nodes: [4]/' "$OUT/fit.yaml" > "$OUT/four.yaml"
timeout 60 $B scalebench testbed up 4 --launcher nsenter --no-slurm --slots 1 | tee "$OUT/raw/up-predict.txt"
for n in node1 node2 node3 node4; do tb shape $n --rate 10gbit; done
on head scalebench submit "$OUT/fit.yaml"
timeout 200 $B scalebench testbed exec head -- scalebench wait ar-2-3 --timeout 190 | tail -n 1
on head scalebench predict --experiment ar-2-3 --nodes 4 | tee "$OUT/raw/predict.txt"
on head scalebench submit "$OUT/four.yaml"
timeout 150 $B scalebench testbed exec head -- scalebench wait ar-4 --timeout 140 | tail -n 1
on head scalebench predictions | tee "$OUT/raw/predictions.txt"
on head scalebench predictions --format json > "$OUT/raw/predictions.json"
for e in ar-2-3 ar-4; do on head scalebench results --experiment $e --format json > "$OUT/raw/$e.jsonl"; done
on head scalebench report --experiment ar-4 --out "$OUT/raw/report-ar-4" > /dev/null 2>&1; ls "$OUT/raw/report-ar-4" | head -3
echo "(A): $((SECONDS - start)) s"
tb down --save "$OUT/raw/predict-testbed" > /dev/null
tar -C "$OUT/raw" -czf "$OUT/raw/predict-testbed.tar.gz" predict-testbed report-ar-4 && rm -rf "$OUT/raw/predict-testbed" "$OUT/raw/report-ar-4"

echo "== (B): call5.sh"
bash "$(dirname "$0")/call5.sh" 2>&1 | sed -n '/submitted experiment/,$p'

tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
