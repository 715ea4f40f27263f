#!/usr/bin/env bash
# The main job: set up, build, and run the quick study on this machine (GPUs if present,
# else host-memory MPI ranks), then print its results table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/bin/scalebench study examples/quick.yaml --db "${SCALEBENCH_DB:-quick.db}"
