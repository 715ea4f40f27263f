#!/usr/bin/env bash
# The GPU study behind docs/results/2026-11-21-report-4xh200: collectives (collectives.yaml) and
# the PyTorch DDP example (examples/pytorch-ddp.yaml, bf16, 1/2/4 GPUs, nvlink and pcie) into one
# store, then `scalebench report` of both. Run from the repository root with the programs on PATH:
#   docs/results/2026-11-21-report-4xh200/run.sh OUT_DIR
set -uo pipefail
out=$1 here=$(dirname "$0")
mkdir -p "$out"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
start=$(date +%s)
timeout 300 scalebench study "$here/collectives.yaml" --db "$out/study.db" >"$out/collectives.log" 2>&1
echo "collectives exit $? after $(($(date +%s) - start)) s" >>"$out/collectives.log"
sed -e "s/gpus_per_node: \[1, 2, all\]/gpus_per_node: [1, 2, 4]/" -e "s/precision: \[bf16, fp32\]/precision: [bf16]/" \
  -e "s/steps: 30/steps: 20/" examples/pytorch-ddp.yaml >"$out/ddp.yaml"
start=$(date +%s)
timeout 240 scalebench study "$out/ddp.yaml" --db "$out/study.db" >"$out/ddp.log" 2>&1
echo "ddp exit $? after $(($(date +%s) - start)) s" >>"$out/ddp.log"
scalebench results --db "$out/study.db" --format json | gzip >"$out/records.jsonl.gz"
scalebench report --db "$out/study.db" --out "$out/report" --title "scalebench report: 4 x H200" >"$out/report.log" 2>&1
rm -rf "$out"/*.db.logs
