#!/bin/bash
# Call 4 on one H200: (A) predict, then verify on a testbed of 4 host-memory hosts whose links are
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

echo "== (B) two hosts given the same GPU"; start=$SECONDS
cat > "$OUT/shared.yaml" <<'YAML'
name: shared-gpu-net
workload: collective
params: {backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 256MiB, step_factor: 4, time_cap_s: 0.3}
placement: {nodes: 2, ranks_per_node: 1}
env: {NCCL_DEBUG: INFO, NCCL_DEBUG_SUBSYS: "INIT,NET", NCCL_SOCKET_IFNAME: eth0}
repetitions: 10
timeout: 2m
YAML
timeout 60 $B scalebench testbed up 2 --launcher nsenter --no-slurm --gpus node1=0 --gpus node2=0 | tee "$OUT/raw/up-shared.txt"
on head scalebench submit "$OUT/shared.yaml"
timeout 150 $B scalebench testbed exec head -- scalebench wait shared-gpu-net --timeout 140 | tail -n 1
on head scalebench status shared-gpu-net --format json > "$OUT/raw/shared-status.json"
on head scalebench results --experiment shared-gpu-net --format json > "$OUT/raw/shared-gpu-net.jsonl"
echo "(B): $((SECONDS - start)) s"
tb down --save "$OUT/raw/shared-testbed" > /dev/null
grep -h "NCCL INFO" "$OUT"/raw/shared-testbed/node*/agent/run-*.log | grep -E "NET/|via|Using|hostHash|Duplicate|comm 0x" | sed 's/^[^ ]* //' | sort | uniq -c | head -20
grep -h -E "WARN|error|Error" "$OUT"/raw/shared-testbed/node*/agent/run-*.log | head -10
tar -C "$OUT/raw" -czf "$OUT/raw/shared-testbed.tar.gz" shared-testbed && rm -rf "$OUT/raw/shared-testbed"

echo "== (C) the conv point, 4 fresh processes"
nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 & dmon=$!
for i in 1 2 3 4; do
  timeout 60 $B mpirun -np 1 scalebench-run conv -p shapes=128x128x3x3@28x28:p1 -p batch=64 -p precision=fp16 -p pass=fwd \
    -p layout=nhwc -p algo=heuristic -p time_cap=0.05 --emit records > "$OUT/raw/conv-$i.jsonl" 2>> "$OUT/raw/conv-errs.txt"
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    if not l.startswith('@@SCALEBENCH_RECORD '): continue
    r = json.loads(l.split(' ',1)[1])
    if r['metric'] == 'throughput': print('conv', sys.argv[2], round(r['value'],1), r['unit'], r['point'].get('engine', r['point'].get('algo','')), r['stats']['cv'])
" "$OUT/raw/conv-$i.jsonl" $i
done
kill $dmon
