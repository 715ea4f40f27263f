#!/usr/bin/env bash
# Nothing measured is lost when the agent stops while the coordinator is down: the coordinator
# is killed (SIGKILL) during a run, the run ends on the agent, the agent is stopped (SIGTERM) and
# keeps the undelivered results in its work folder's journal; coordinator and agent start again
# and the run's results and end arrive, once each.
source "$(dirname "$0")/lib.sh"
start_coordinator "$WORK/j.db"
start_agent node-a
cat >"$WORK/journal.yaml" <<'YAML'
name: journal
workload: collective
params: {min_bytes: 1KiB, max_bytes: 1MiB, step_factor: 4, time_cap: 0.5}
placement: {ranks_per_node: [2]}
repetitions: 10
YAML
"$BIN/scalebench" submit "$WORK/journal.yaml" --coordinator "$URL" >/dev/null
wait_until 30 '[[ $(curl -sf "$URL/api/v1/experiments/journal" | py "d[\"run_list\"][0][\"state\"]") == running ]]'
kill -KILL "$COORD_PID"
wait "$COORD_PID" 2>/dev/null || true
wait_until 60 'grep -q "run 1 ok" "$WORK/agent-node-a.log"'
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
grep -q "kept in $WORK/agent-node-a/outbox.jsonl" "$WORK/agent-node-a.log" || fail "the agent did not say where it kept its results"
grep -q '"/api/v1/runs/1/finish"' "$WORK/agent-node-a/outbox.jsonl" || fail "the run's end is not in the journal"

start_coordinator "$WORK/j.db" "$PORT"
start_agent node-a
wait_finished journal 60
grep -q "delivering [0-9]* messages left undelivered" "$WORK/agent-node-a.log" || fail "no replay logged"
"$BIN/scalebench" results --db "$WORK/j.db" --experiment journal --format json >"$WORK/j.jsonl"
# 6 sizes (1 KiB..1 MiB by 4) x 3 metrics, all ok, none twice, from the run's one attempt.
json_check "$WORK/j.jsonl" 'len(records) == 6 * 3'
json_check "$WORK/j.jsonl" 'all(r["status"] == "ok" for r in records)'
json_check "$WORK/j.jsonl" 'len(set((r["point"]["size"], r["metric"]) for r in records)) == 18'
"$BIN/scalebench" status journal --db "$WORK/j.db" | grep -q '1/1 .*"ok":1' || fail "the run is not ok"
wait_until 10 '[[ ! -s $WORK/agent-node-a/outbox.jsonl ]]'
echo "agent_journal: ok"
