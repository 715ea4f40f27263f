#!/bin/bash
# Issue 44's soak with the played cluster's records threads at nice 19 (3dc02d0),
# its store on disk as a user's would be. The quiet 2-core machine, the coordinator on CPU 0, the
# played cluster on CPU 1. Programs from PATH (build-host/bin). The store grows to about 3 GB in
# TMPDIR.
set -u
export TMPDIR=${TMPDIR:-/var/tmp/soak}
mkdir -p "$TMPDIR"
nproc; uptime; df -h "$TMPDIR" | tail -1
echo "== soak"
taskset -c 1 scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"
uptime
