#!/usr/bin/env bash
# The coordinator is killed (SIGKILL) in the middle of a study and restarted on its store:
# the agent keeps what it measured until the coordinator is back, the study completes, and
# every result is there.
source "$(dirname "$0")/lib.sh"
start_coordinator "$WORK/r.db"
start_agent node-a
cat >"$WORK/restart.yaml" <<'YAML'
name: restart
workload: collective
params: {min_bytes: 1KiB, max_bytes: 4MiB, step_factor: 4, time_cap: 0.3}
matrix:
  op: [all_reduce, all_gather, reduce_scatter, broadcast]
placement: {ranks_per_node: [2]}
repetitions: 10
YAML
"$BIN/scalebench" submit "$WORK/restart.yaml" --coordinator "$URL" >/dev/null
for _ in $(seq 120); do
  done_runs=$(curl -sf "$URL/api/v1/experiments/restart" | python3 -c 'import json,sys; print(json.load(sys.stdin)["done"])')
  [[ $done_runs -ge 1 ]] && break
  sleep 0.25
done
[[ $done_runs -ge 1 && $done_runs -lt 4 ]] || fail "expected to kill mid-study, done=$done_runs"
kill -KILL "$COORD_PID"
wait "$COORD_PID" 2>/dev/null || true
sleep 2  # the agent goes on measuring and holds its records
start_coordinator "$WORK/r.db" "$PORT"
wait_finished restart 120
"$BIN/scalebench" results --db "$WORK/r.db" --experiment restart --format json >"$WORK/r.jsonl"
# 4 ops x 7 sizes (1 KiB..4 MiB by 4) x 3 metrics, every one ok, none twice.
json_check "$WORK/r.jsonl" 'len(records) == 4 * 7 * 3'
json_check "$WORK/r.jsonl" 'all(r["status"] == "ok" for r in records)'
json_check "$WORK/r.jsonl" 'len(set((r["run_id"], r["point"]["size"], r["metric"]) for r in records)) == 84'
"$BIN/scalebench" status restart --db "$WORK/r.db" | grep -q '4/4 .*"ok":4' || fail "runs not all ok after restart"
echo "coordinator_restart: ok"
