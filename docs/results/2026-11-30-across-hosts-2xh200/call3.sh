#!/bin/bash
# Call 3 on 2 x H200, the session's last: (A) predict, then verify on 4 hosts whose links are
# shaped to 10 Gbit/s (tbf), fitted on 2 and 3 hosts, scored at 4: (A1) NCCL's ring all_reduce
# over its NET socket transport, the 4 hosts sharing the 2 GPUs (node1, node3: GPU 0; node2,
# node4: GPU 1); (A2) Open MPI's ring on host memory again (the series whose 16 MiB point missed at
# 4 hosts in 2026-11-29-testbed call 10), to see whether that dip comes back. (B) the GPU regression
# study again (GPU 0), against the accepted baseline. (C), before (B): call 2's Inception study with
# `check: false`. Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
tb() { $B scalebench testbed "$@"; }
on() { $B scalebench testbed exec "$@"; }
predict() {  # NAME PARAMS PLACEMENT VARIANT
  printf 'name: %s-2-3\nworkload: collective\nparams: %s\nplacement: %s\nvariants:\n  %s\nrepetitions: 10\n' \
    "$1" "$2" "$3" "$4" > "$OUT/raw/$1-2-3.yaml"
  sed -e "s/name: $1-2-3/name: $1-4/" -e 's/nodes: \[2, 3\]/nodes: [4]/' "$OUT/raw/$1-2-3.yaml" > "$OUT/raw/$1-4.yaml"
  on head scalebench submit "$OUT/raw/$1-2-3.yaml"
  timeout 200 $B scalebench testbed exec head -- scalebench wait $1-2-3 --timeout 190 | tail -n 1
  on head scalebench predict --experiment $1-2-3 --nodes 4 | tee "$OUT/raw/$1-predict.txt" | head -3
  on head scalebench submit "$OUT/raw/$1-4.yaml"
  timeout 150 $B scalebench testbed exec head -- scalebench wait $1-4 --timeout 140 | tail -n 1
  for e in $1-2-3 $1-4; do on head scalebench results --experiment $e --format json > "$OUT/raw/$e.jsonl"; done
}
echo "== (A) predict, then verify: 4 hosts, every link 10 Gbit/s"; start=$SECONDS
timeout 60 $B scalebench testbed up 4 --launcher nsenter --no-slurm --slots 1 \
  --gpus node1=0 --gpus node2=1 --gpus node3=0 --gpus node4=1 > "$OUT/raw/up.txt" 2>&1; tail -2 "$OUT/raw/up.txt"
for n in node1 node2 node3 node4; do tb shape $n --rate 10gbit; done
predict nccl-ring "{backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 64MiB, step_factor: 2, time_cap_s: 1}" \
  "{nodes: [2, 3], gpus_per_node: 1}" \
  "net: {transport: net, env: {NCCL_SOCKET_IFNAME: eth0, NCCL_ALGO: Ring, NCCL_NVLS_ENABLE: \"0\"}}"
predict mpi-ring "{backend: mpi, op: all_reduce, min_bytes: 1MiB, max_bytes: 64MiB, step_factor: 2, time_cap_s: 1}" \
  "{nodes: [2, 3], ranks_per_node: 1}" \
  "ring: {env: {OMPI_MCA_coll_tuned_use_dynamic_rules: \"1\", OMPI_MCA_coll_tuned_allreduce_algorithm: \"4\"}}"
on head scalebench predictions | tee "$OUT/raw/predictions.txt"
on head scalebench predictions --format json > "$OUT/raw/predictions.json"
on head scalebench report --out "$OUT/raw/report" > /dev/null 2>&1
echo "(A): $((SECONDS - start)) s"
tb down --save "$OUT/raw/predict-testbed" > /dev/null 2>&1

echo "== (C) inception study again with check: false (call 2's failed on the known 1-of-31 gradient check)"; start=$SECONDS
sed -e 's/^name: inception-scaling-2gpu/name: inception-scaling-2gpu-nocheck/' -e 's/^  steps: 5$/  steps: 5\n  check: false/' \
  "$(dirname "$0")/inception-scaling.yaml" > "$OUT/raw/inception-nocheck.yaml"
timeout 240 $B scalebench study "$OUT/raw/inception-nocheck.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
tail -22 "$OUT/raw/study.txt"
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/inception-records.jsonl"
$B scalebench ratio --db "$OUT/raw/study.db" --metric throughput 2>&1 | tail -5

echo "== (B) regression study against the accepted baseline (GPU 0)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 240 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr-end" > "$OUT/raw/gr-end.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr-end.txt"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
