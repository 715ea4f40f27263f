#!/usr/bin/env bash
# Runs the quick study on this machine's GPUs and, in the same call, nccl-tests' all_reduce_perf
# over the same sizes and GPU counts (NVLink and P2P off), so the two can be compared point by
# point. Needs scalebench's programs and all_reduce_perf on PATH; writes everything to OUTDIR.
#   scripts/compare-nccl-tests.sh OUTDIR [EXPERIMENT.yaml]
set -uo pipefail
out=${1:?usage: compare-nccl-tests.sh OUTDIR [EXPERIMENT.yaml]}
exp=${2:-examples/quick.yaml}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L | wc -l)
{
  date -u
  nvidia-smi -L
  nvidia-smi topo -m
  nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  mpirun --version | head -1
  echo "NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-unset}"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

# nccl-tests first and last, scalebench in between: drift over the call shows as a difference
# between the two nccl-tests passes.
peer() {
  local tag=$1
  for n in 1 2 "$ngpu"; do
    mpirun --allow-run-as-root -np "$n" --bind-to none all_reduce_perf -b 1K -e 64M -f 2 -g 1 -w 5 -n 20 \
      >"$out/nccl-tests-$tag-nvlink-np$n.txt" 2>&1
    NCCL_P2P_DISABLE=1 mpirun --allow-run-as-root -np "$n" --bind-to none -x NCCL_P2P_DISABLE all_reduce_perf \
      -b 1K -e 64M -f 2 -g 1 -w 5 -n 20 >"$out/nccl-tests-$tag-pcie-np$n.txt" 2>&1
  done
}
peer before
time scalebench study "$exp" --db "$out/study.db" --logs "$out/study-logs" 2>&1 | tee "$out/study.txt"
scalebench results --db "$out/study.db" --format csv >"$out/results.csv"
scalebench results --db "$out/study.db" --format json >"$out/results.jsonl"
peer after
# scalebench-run by hand with nccl-tests' iteration count, for a like-for-like table.
mpirun --allow-run-as-root -np "$ngpu" --bind-to none scalebench-run collective -p backend=nccl -p min_bytes=1KiB \
  -p max_bytes=64MiB -p iters=20 -p warmup=5 >"$out/scalebench-run-np$ngpu-iters20.txt" 2>&1
cat "$out/scalebench-run-np$ngpu-iters20.txt"
for f in "$out"/nccl-tests-*-np"$ngpu".txt; do echo "== $f"; grep -E '^ +(1048576|67108864) ' "$f"; done
