#!/usr/bin/env bash
# A run that outlives its timeout: every rank is killed, the run is a timeout record with the
# reason, the study goes on to the next run, and `study` exits 3.
source "$(dirname "$0")/lib.sh"
cat >"$WORK/slow.yaml" <<YAML
name: slow
workload: collective
params: {min_bytes: 256MiB, max_bytes: 256MiB, warmup: 200, iters: 50}
placement: {ranks_per_node: [2]}
timeout: 3s
YAML
set +e
"$BIN/scalebench" study "$WORK/slow.yaml" --db "$WORK/s.db" >"$WORK/study.log" 2>&1; rc=$?
set -e
[[ $rc -eq 3 ]] || fail "study exit $rc (want 3)"
grep -q "timeout" "$WORK/study.log" || fail "no timeout in the study output"
"$BIN/scalebench" results --db "$WORK/s.db" --format json >"$WORK/r.jsonl"
json_check "$WORK/r.jsonl" 'len(records) == 1 and records[0]["status"] == "timeout"'
json_check "$WORK/r.jsonl" '"every rank was killed" in records[0]["reason"]'
sleep 0.5
if pgrep -f "$WORK/s.db.logs/agent/run-" >/dev/null; then fail "ranks still running after the timeout"; fi
echo "run_timeout: ok"
