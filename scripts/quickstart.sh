#!/usr/bin/env bash
# The main job: set up, build, and run the quick study on this machine (GPUs if present,
# else host-memory MPI ranks), print its results table, and write its report page. With a GPU,
# examples/quick-gpu.yaml follows: GEMM, host<->GPU copies and memory bandwidth against peak.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only the programs the study runs: the tests and benchmarks are scripts/test.sh's business.
SCALEBENCH_BUILD_TARGETS="scalebench scalebench-coordinator scalebench-agent scalebench-run" \
  scripts/build.sh -DSCALEBENCH_TESTS=OFF
db=${SCALEBENCH_DB:-quick.db}
status=0
build/bin/scalebench study examples/quick.yaml --db "$db" || status=$?
# With a GPU, also what one GPU can show: GEMM per precision, host<->GPU copies, memory bandwidth.
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu_status=0
  build/bin/scalebench study examples/quick-gpu.yaml --db "$db" || gpu_status=$?
  status=$((status > gpu_status ? status : gpu_status))
fi
# The report (every experiment in the store) shows what was stored even when some runs failed.
if [[ -f $db ]]; then
  build/bin/scalebench report --db "$db" --out "${db%.db}-report" || true
fi
exit "$status"
