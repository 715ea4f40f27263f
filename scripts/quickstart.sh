#!/usr/bin/env bash
# The main job: set up, build, and run the quick study on this machine, print its results and
# write its report page. Two GPUs or more: the all-reduce (examples/quick.yaml) over 1, 2 and all
# GPUs, NVLink against PCIe; none: the same over 1 and 2 host-memory MPI ranks. With a GPU, even
# one, examples/quick-gpu.yaml: GEMM, host<->GPU copies and memory bandwidth against their peaks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only what this machine can run: GPU code for its own GPU's architecture when nvidia-smi lists
# one (and the CUDA toolkit is there), none at all without a GPU.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [[ $gpus -ge 1 ]]; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
  gpu_args=(-DSCALEBENCH_CUDA=AUTO ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch})
  echo "quickstart: $gpus GPU(s) found: GPU workloads built for compute capability ${arch:-80 and 90}"
else
  gpu_args=(-DSCALEBENCH_CUDA=OFF)
  echo "quickstart: no GPU found: host-memory workloads only (no CUDA code built)"
fi
# Only the programs the study runs: the tests and benchmarks are scripts/test.sh's business.
SCALEBENCH_BUILD_TARGETS="scalebench scalebench-coordinator scalebench-agent scalebench-run" \
  scripts/build.sh -DSCALEBENCH_TESTS=OFF "${gpu_args[@]}"
db=${SCALEBENCH_DB:-quick.db}
status=0
# The all-reduce needs two GPUs, or none (then two host-memory MPI ranks): on one GPU nothing
# crosses between GPUs (busbw 0), so that machine gets what one GPU can show instead.
if [[ $gpus -eq 1 ]]; then
  echo "quickstart: one GPU: no all-reduce (it needs two); GEMM, host<->GPU copies and memory bandwidth instead"
else
  build/bin/scalebench study examples/quick.yaml --db "$db" || status=$?
fi
# With a GPU, also what one GPU can show: GEMM per precision, host<->GPU copies, memory bandwidth.
if [[ $gpus -ge 1 ]]; then
  gpu_status=0
  build/bin/scalebench study examples/quick-gpu.yaml --db "$db" || gpu_status=$?
  status=$((status > gpu_status ? status : gpu_status))
fi
# The report (every experiment in the store) shows what was stored even when some runs failed.
if [[ -f $db ]]; then
  build/bin/scalebench report --db "$db" --out "${db%.db}-report" || true
fi
exit "$status"
