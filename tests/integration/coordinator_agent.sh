#!/usr/bin/env bash
# A real coordinator and agent: submit, run through mpirun, results and /metrics; bad input.
source "$(dirname "$0")/lib.sh"
start_coordinator "$WORK/c.db"
start_agent node-a
cat >"$WORK/two-ops.yaml" <<'YAML'
name: two-ops
workload: collective
params: {min_bytes: 4KiB, max_bytes: 64KiB, step_factor: 4, time_cap: 0.2}
matrix:
  op: [all_reduce, all_gather]
placement: {ranks_per_node: [2]}
repetitions: 5
references:
  busbw: {target: 1000000, lower: -0.5, unit: GB/s, where: {size: 64KiB}}
YAML
"$BIN/scalebench" submit "$WORK/two-ops.yaml" --coordinator "$URL" | grep -q "submitted experiment two-ops" || fail "submit"
wait_finished two-ops 60
"$BIN/scalebench" status two-ops --coordinator "$URL" | grep -q '2/2' || fail "status shows 2/2"
"$BIN/scalebench" results --experiment two-ops --coordinator "$URL" --format json >"$WORK/r.jsonl"
json_check "$WORK/r.jsonl" 'len(records) == 2 * 3 * 3'
json_check "$WORK/r.jsonl" 'set(r["params"]["op"] for r in records) == {"all_reduce", "all_gather"}'
json_check "$WORK/r.jsonl" 'all(r["placement"]["ranks"] == 2 and r["params"]["backend"] == "mpi" for r in records)'
# The (unreachable) reference applies to the 64 KiB busbw records only, and fails them.
json_check "$WORK/r.jsonl" 'sorted(o["outcome"] for r in records for o in r.get("references", [])) == ["fail", "fail"]'
json_check "$WORK/r.jsonl" 'all(r["point"]["size"] == 65536 and r["metric"] == "busbw" for r in records if "references" in r)'

curl -sf "$URL/metrics" >"$WORK/metrics.txt"
grep -q '^scalebench_runs_finished_total{status="ok"} 2$' "$WORK/metrics.txt" || fail "runs_finished_total"
grep -q '^scalebench_agents{state="alive"} 1$' "$WORK/metrics.txt" || fail "agents gauge"
grep -E '^scalebench_collective_busbw_bytes_per_second\{.*experiment="two-ops".*op="all_gather".*size="65536".*\} [0-9.e+]+$' \
  "$WORK/metrics.txt" >/dev/null || fail "busbw gauge with labels"
grep -q '^scalebench_collective_time_seconds{' "$WORK/metrics.txt" || fail "time gauge in seconds"
grep -q '^# TYPE scalebench_records_ingested_total counter' "$WORK/metrics.txt" || fail "records counter"

# Bad input: one clear error line naming file:line:column, exit 2, nothing stored lost.
printf 'name: bad\nworkload: collective\nparams: {min_bytes: -1}\n' >"$WORK/neg.yaml"
set +e
out=$("$BIN/scalebench" submit "$WORK/neg.yaml" --coordinator "$URL" 2>&1); rc=$?
set -e
[[ $rc -eq 2 ]] || fail "negative size: exit $rc"
grep -q "neg.yaml:3:21: field 'params.min_bytes'" <<<"$out" || fail "negative size message: $out"
printf 'name: bad\nworkload: colective\n' >"$WORK/wl.yaml"
set +e; out=$("$BIN/scalebench" submit "$WORK/wl.yaml" --coordinator "$URL" 2>&1); rc=$?; set -e
[[ $rc -eq 2 ]] && grep -q "wl.yaml:2:11: field 'workload': unknown workload 'colective'" <<<"$out" || fail "unknown workload: $out"
printf 'name: bad\nworkload: collective\nparams: {op: [all_reduce\n' >"$WORK/broken.yaml"
set +e; out=$("$BIN/scalebench" submit "$WORK/broken.yaml" --coordinator "$URL" 2>&1); rc=$?; set -e
[[ $rc -eq 2 ]] && grep -q "broken.yaml:[0-9]*:[0-9]*: malformed YAML" <<<"$out" || fail "malformed YAML: $out"
printf 'name: bad\nworkload: collective\nrepetition: 3\n' >"$WORK/key.yaml"
set +e; out=$("$BIN/scalebench" submit "$WORK/key.yaml" --coordinator "$URL" 2>&1); rc=$?; set -e
[[ $rc -eq 2 ]] && grep -q "key.yaml:3:1: field 'repetition': unknown key" <<<"$out" || fail "unknown key: $out"
# The server validates too (a client that skips local checks gets the same answer).
code=$(curl -s -o "$WORK/ans.json" -w '%{http_code}' -XPOST --data-binary @"$WORK/neg.yaml" -H 'X-Scalebench-Source: neg.yaml' "$URL/api/v1/experiments")
[[ $code == 400 ]] && grep -q 'neg.yaml:3:21' "$WORK/ans.json" || fail "server-side validation ($code)"
code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST --data-binary 'not json' "$URL/api/v1/agents/register")
[[ $code == 400 ]] || fail "bad register body answered $code"
# An unreachable coordinator: exit 4, one line naming it.
set +e; out=$("$BIN/scalebench" status --coordinator http://127.0.0.1:1 2>&1); rc=$?; set -e
[[ $rc -eq 4 ]] && grep -q "http://127.0.0.1:1" <<<"$out" || fail "unreachable coordinator: rc=$rc $out"
"$BIN/scalebench" results --experiment two-ops --coordinator "$URL" --format json | wc -l | grep -qx 18 || fail "records lost"

# Shutdown is a real path: SIGTERM ends both with status 0.
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" || fail "agent exit status $?"
kill -TERM "$COORD_PID"; wait "$COORD_PID" || fail "coordinator exit status $?"
echo "coordinator_agent: ok"
