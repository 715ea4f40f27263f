#!/bin/bash
# Call 1 on 2 x H200: the GPU regression study (GPU 0, the accepted baseline's one-GPU shape), then
# the testbed with both GPUs in both hosts (node1: GPUs 0,1; node2: GPUs 1,0, so that a one-GPU
# rank of each host lands on a different GPU): an NCCL all_reduce and GPT-2 124M data-parallel
# training in three layouts, 1 host x 2 GPUs (NVLink), 2 hosts x 1 GPU (NCCL's NET socket
# transport over the testbed's veth links), 2 hosts x 2 GPUs (NVLink inside each host, NET
# between them), and GPT on 1 GPU for the scaling base. Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m | head -4

echo "== regression study against the accepted baseline (GPU 0)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 240 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr-start" > "$OUT/raw/gr-start.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr-start.txt"

echo "== testbed: 2 hosts, both GPUs in each"; start=$SECONDS
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
on() { $B scalebench testbed exec "$@"; }
timeout 60 $B scalebench testbed up 2 --launcher nsenter --no-slurm --gpus node1=0,1 --gpus node2=1,0 > "$OUT/raw/up.txt" 2>&1
tail -3 "$OUT/raw/up.txt"
# NAME WORKLOAD-PARAMS PLACEMENT VARIANT REPETITIONS
experiment() {
  cat > "$OUT/raw/$1.yaml" <<YAML
name: $1
workload: $2
params: $3
placement: $4
variants:
  $5
repetitions: $6
timeout: 4m
YAML
  on head scalebench submit "$OUT/raw/$1.yaml" | tail -1
  timeout 300 $B scalebench testbed exec head -- scalebench wait "$1" --timeout 290 | tail -n 1
  on head scalebench results --experiment "$1" --format json > "$OUT/raw/$1.jsonl"
}
AR="{backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 256MiB, step_factor: 4, time_cap_s: 0.3}"
GPT="{model: gpt2-124m, seq: 1024, micro_batch: 8, warmup: 3, steps: 5}"
ENV="env: {NCCL_SOCKET_IFNAME: eth0, NCCL_NVLS_ENABLE: \"0\"}"
experiment ar-1x2 collective "$AR" "{nodes: 1, gpus_per_node: 2}" "nvlink: {transport: nvlink, $ENV}" 5
experiment ar-2x1 collective "$AR" "{nodes: 2, gpus_per_node: 1}" "net: {transport: net, $ENV}" 5
experiment ar-2x2 collective "$AR" "{nodes: 2, gpus_per_node: 2}" "nvlink-net: {transport: nvlink, $ENV}" 5
experiment gpt-1x1 gpt "$GPT" "{nodes: 1, gpus_per_node: 1}" "one: {$ENV}" 3
experiment gpt-1x2 gpt "$GPT" "{nodes: 1, gpus_per_node: 2}" "nvlink: {transport: nvlink, $ENV}" 3
experiment gpt-2x1 gpt "$GPT" "{nodes: 2, gpus_per_node: 1}" "net: {transport: net, $ENV}" 3
experiment gpt-2x2 gpt "$GPT" "{nodes: 2, gpus_per_node: 2}" "nvlink-net: {transport: nvlink, $ENV}" 3
echo "testbed: $((SECONDS - start)) s"
python3 "$D/layouts.py" "$OUT/raw" | tee "$OUT/layouts.txt"
$B scalebench testbed down --save "$OUT/raw/testbed" > /dev/null 2>&1
grep -h "NCCL INFO" "$OUT"/raw/testbed/node*/agent/run-*.log 2>/dev/null | grep -E "via NET|via P2P|Using network" | sed 's/^[^ ]* //' | sed 's/^.*NCCL INFO //' | sort | uniq -c | sort -rn | head -8
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
