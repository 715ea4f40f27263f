#!/usr/bin/env bash
# The device runs of this folder: nccl-tests and scalebench's collectives side by side under one
# scalebench study (examples/nccl-tests-vs-scalebench.yaml at one GPU count) and their ratios;
# with `ddp`, the PyTorch DDP example (examples/pytorch-ddp.yaml) at 1 and GPUS GPUs. Run from the repository
# root with the programs (and nccl-tests' binaries) on PATH:
#   [OPS=a,b] [LIMIT=seconds] docs/results/2026-11-21-nccl-tests-in-study-4xh200/run.sh GPUS OUT_DIR [ddp]
# OPS narrows the study's collectives; LIMIT bounds the study's wall time (480 s).
set -uo pipefail
gpus=$1 out=$2 extra=${3:-}
ops=${OPS:-all_reduce,all_gather,reduce_scatter,alltoall,broadcast,reduce,sendrecv}
mkdir -p "$out"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
# One GPU count per call, two rounds instead of three: each call fits a ten-minute window.
sed -e "s/gpus_per_node: \[2, all\]/gpus_per_node: [$gpus]/" -e "s/^rounds: 3/rounds: 2/" \
  -e "s/^  op: \[.*\]/  op: [${ops//,/, }]/" \
  examples/nccl-tests-vs-scalebench.yaml >"$out/study.yaml"
start=$(date +%s)
timeout "${LIMIT:-480}" scalebench study "$out/study.yaml" --db "$out/study.db" >"$out/study.log" 2>&1
echo "study exit $? after $(($(date +%s) - start)) s" >>"$out/study.log"
for t in nvlink pcie; do
  scalebench ratio --db "$out/study.db" --variants "scalebench-$t,nccl-tests-$t" --metric busbw \
    >"$out/ratio-busbw-$t.txt" 2>&1
  scalebench ratio --db "$out/study.db" --variants "scalebench-$t,nccl-tests-$t" --metric time --format csv \
    >"$out/ratio-time-$t.csv" 2>&1
  scalebench ratio --db "$out/study.db" --variants "scalebench-$t,nccl-tests-$t" --metric busbw --format csv \
    >"$out/ratio-busbw-$t.csv" 2>&1
done
scalebench ratio --db "$out/study.db" --variants scalebench-nvlink,scalebench-pcie --metric busbw --format csv \
  >"$out/ratio-nvlink-pcie-scalebench.csv" 2>&1
scalebench ratio --db "$out/study.db" --variants nccl-tests-nvlink,nccl-tests-pcie --metric busbw --format csv \
  >"$out/ratio-nvlink-pcie-nccl-tests.csv" 2>&1
scalebench results --db "$out/study.db" --format json | gzip >"$out/records.jsonl.gz"
if [[ $extra == ddp ]]; then
  sed -e "s/gpus_per_node: \[1, 2, all\]/gpus_per_node: [1, $gpus]/" -e "s/precision: \[bf16, fp32\]/precision: [bf16]/" \
    -e "s/steps: 30/steps: 20/" examples/pytorch-ddp.yaml >"$out/ddp.yaml"
  timeout 240 scalebench study "$out/ddp.yaml" --db "$out/ddp.db" >"$out/ddp.log" 2>&1
  echo "ddp exit $?" >>"$out/ddp.log"
  scalebench results --db "$out/ddp.db" --format json | gzip >"$out/ddp-records.jsonl.gz"
fi
rm -rf "$out"/*.db.logs
