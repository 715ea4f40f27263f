#!/usr/bin/env bash
# Assignments are acknowledged (issue 30): the coordinator is stopped (SIGSTOP) for longer than the
# agent's 5 s client timeout while a run is queued and the agent is free. The agent gives up on
# its heartbeats; when the coordinator resumes it still answers them, handing the run to nobody.
# Those answers must use no attempt: the run finishes ok as attempt 1, with no failed record, and
# the coordinator says it queued the unconfirmed assignment again.
source "$(dirname "$0")/lib.sh"
rm -f "$WORK/port"
# A long heartbeat timeout: the stall must not make the agent lost (that is another test's case).
"$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$WORK/s.db" \
  --heartbeat-interval 0.5 --heartbeat-timeout 60 >>"$WORK/coordinator.log" 2>&1 &
COORD_PID=$!
PIDS+=("$COORD_PID")
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || fail "coordinator did not start"
URL=http://127.0.0.1:$(cat "$WORK/port")
start_agent node-a --slots 2

cat >"$WORK/stall.yaml" <<'YAML'
name: stall
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 64KiB, step_factor: 4, time_cap: 0.2}
placement: {ranks_per_node: 2}
repetitions: 5
retries: 2
YAML
# The agent is held while the run is queued, so that its next heartbeats reach a stopped
# coordinator: they are the ones it gives up on. A heartbeat sent just before the hold may still
# be waiting in the coordinator: under load it was answered after the submission, with the run,
# and the stall never happened. So the submission waits until the coordinator has heard nothing
# from the held agent for 1.5 s: no heartbeat of it is left to answer.
kill -STOP "$AGENT_PID"
quiet_agent() {
  api /api/v1/agents | py '[a for a in d["agents"] if a["id"] == "node-a"][0]["seconds_since_heartbeat"] > 1.5' |
    grep -q True
}
wait_until 20 quiet_agent
"$BIN/scalebench" submit "$WORK/stall.yaml" --coordinator "$URL" >/dev/null
kill -STOP "$COORD_PID"
# SIGSTOP lands when each thread next leaves the kernel: a thread inside a store commit runs on
# meanwhile, and once answered the resumed agent's first heartbeat with the run.
all_stopped() {
  local t
  for t in /proc/"$COORD_PID"/task/*/stat; do
    [[ $(sed 's/.*) //' "$t" | cut -d' ' -f1) == [tT] ]] || return 1
  done
}
wait_until 10 all_stopped
kill -CONT "$AGENT_PID"
# Four heartbeats time out (5 s each, 0.5 s apart) and a fifth is waiting when the coordinator
# resumes. With two stale ones the live one took the run first in one of four full runs on a
# 2-core host, and the stall did not show; more stale ones ahead of it make that less likely.
sleep 22
kill -CONT "$COORD_PID"
wait_finished stall 60

api /api/v1/experiments/stall >"$WORK/e.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/e.json") == ok ]] || fail "run not ok: $(cat "$WORK/e.json")"
[[ $(py 'd["run_list"][0]["attempt"]' <"$WORK/e.json") == 1 ]] ||
  fail "attempts used by answers nobody received: $(cat "$WORK/e.json")"
# The stale answers did happen, and were taken back rather than counted.
grep -q "assignment to node-a not confirmed (not in node-a's next heartbeat); queued again, no attempt used" \
  "$WORK/coordinator.log" || fail "no unconfirmed assignment was seen: the stall did not reproduce"
! grep -q "restarted while the run was in flight" "$WORK/coordinator.log" || fail "an attempt was failed as a restart"
grep -q "coordinator unreachable" "$WORK/agent-node-a.log" || fail "the agent never gave up on a heartbeat"
"$BIN/scalebench" results --experiment stall --coordinator "$URL" --format json >"$WORK/r.jsonl"
json_check "$WORK/r.jsonl" 'len(records) > 0 and all(r["status"] == "ok" for r in records)'
echo "stalled answers: run ok at attempt 1"
