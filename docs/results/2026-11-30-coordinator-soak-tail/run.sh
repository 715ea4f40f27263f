#!/bin/bash
# Issue 44's soak once more, its store on disk as a user's would be, with the figures added to
# each window since the tmpfs control (2026-11-30-coordinator-soak-tmpfs): the soak's own CPU (it
# plays the cluster on the other core) and the heartbeats' median beside their p99. The quiet
# 2-core machine, the coordinator on CPU 0, the played cluster on CPU 1, nothing else running.
# Programs from PATH (build-host/bin). The store grows to about 3 GB in TMPDIR.
set -u
export TMPDIR=${TMPDIR:-/var/tmp/soak}
mkdir -p "$TMPDIR"
nproc; uptime; df -h "$TMPDIR" | tail -1
echo "== soak"
taskset -c 1 scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"
uptime
