#!/bin/bash
# This folder's cases on this branch's build again, at a later commit, keeping their raw output
# (the first runs kept only the typed tables of README.md). From the repository root, with the
# programs built (cmake --build build-host --target scalebench-coordinator scalebench scalebench-agent scalebench-run):
#   BIN=build-host/bin OUT=docs/results/2026-11-29-coordinator-queue/rerun-COMMIT bash docs/results/2026-11-29-coordinator-queue/rerun.sh
# Each case of bench/heartbeat_during.py starts its own coordinator on a free port in a temporary
# folder and ends it; tests/integration/large_submission.sh does the same and ends what it started.
set -u
BIN=${BIN:-build-host/bin}; OUT=${OUT:?a folder for the output}
mkdir -p "$OUT"
{ echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo ' (with changes)')"
  echo "cores $(nproc)"; date -u; } > "$OUT/machine.txt"
for c in submit100k get8x60; do
  echo "== $c, before: $(cut -d' ' -f1-3 /proc/loadavg) (load average)"
  timeout 900 python3 bench/heartbeat_during.py "$BIN/scalebench-coordinator" "$c"; echo "rc=$?"
done > "$OUT/heartbeat-during.txt" 2>&1
{ echo "== before: $(cut -d' ' -f1-3 /proc/loadavg) (load average)"
  SCALEBENCH_BIN=$BIN SCALEBENCH_SRC=. timeout 900 bash tests/integration/large_submission.sh; echo "rc=$?"; } \
  > "$OUT/large-submission.txt" 2>&1
