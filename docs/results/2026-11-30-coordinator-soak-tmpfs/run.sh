#!/bin/bash
# Issue 44's soak with its store in memory (tmpfs) instead of on disk, as a control: the last
# soaks' heartbeat p99 drifted by 40-60% while the coordinator's CPU and its state lock's wait
# stayed flat, and the store grew to about 3 GB. If the drift goes away here, it comes from the
# disk (writeback of the store's pages, checkpoints over a growing file); if not, from elsewhere.
# Same set-up as 2026-11-30-coordinator-record-nice/run.sh: the quiet 2-core machine, the
# coordinator on CPU 0 and the played cluster on CPU 1, nothing else running. Programs from PATH
# (build-host/bin). TMPDIR must be on a tmpfs with 4 GB free (default /dev/shm/soak).
set -u
export TMPDIR=${TMPDIR:-/dev/shm/soak}
mkdir -p "$TMPDIR"
nproc; uptime; df -h "$TMPDIR" | tail -1; stat -f -c 'filesystem type: %T' "$TMPDIR"
echo "== soak"
taskset -c 1 scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"
uptime
