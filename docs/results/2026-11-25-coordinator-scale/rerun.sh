#!/bin/bash
# This folder's bench on the branch side again, at a later commit, keeping its output as a file.
# From the repository root, with the programs built
# (cmake --build build-host --target scalebench-coordinator scalebench-coordinator-load):
#   BIN=build-host/bin OUT=docs/results/2026-11-25-coordinator-scale/rerun-COMMIT bash docs/results/2026-11-25-coordinator-scale/rerun.sh
# The bench starts the scalebench-coordinator beside it for each size, in a temporary folder, and ends it.
set -u
BIN=${BIN:-build-host/bin}; OUT=${OUT:?a folder for the output}
mkdir -p "$OUT"
{ echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo ' (with changes)')"
  echo "cores $(nproc)"; date -u; } > "$OUT/machine.txt"
{ echo "== before: $(cut -d' ' -f1-3 /proc/loadavg) (load average)"
  timeout 900 "$BIN/scalebench-coordinator-load" --agents 1000,2000,4000 --duration 20; echo "rc=$?"; } \
  > "$OUT/load.txt" 2>&1
