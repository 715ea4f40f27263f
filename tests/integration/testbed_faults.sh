#!/usr/bin/env bash
# Faults only networks make, on a testbed of 3 nodes and head (mpirun over ssh between hosts):
# - a worker host cut off mid-run: its agent is declared lost within the heartbeat timeout, the
#   run is retried on the other hosts; once the host is back, its stale attempt is cancelled;
# - the coordinator's host cut off for 60 s mid-run: the agents keep their records in their outbox
#   and deliver them after the heal;
# - a host rebooted mid-run (every process of it killed, its daemons started again).
# In each, no record is lost and none is stored twice.
# Skipped (77) only where this machine cannot make namespaces or has no sshd.
if [[ $(id -u) -ne 0 ]] || ! unshare --net --uts --mount true 2>/dev/null || ! command -v sshd >/dev/null; then
  echo "testbed_faults: skipped: needs root, network namespaces and sshd"
  exit 77
fi
export TMPDIR=/var/tmp
source "$(dirname "$0")/lib.sh"
# Heartbeats every 0.5 s, lost after 4 s; a 60 s absence of the coordinator is within what agents
# wait for (they retry with their outbox), not what the coordinator waits for: runs are retried
# after the heal only if their agents were lost.
start_testbed 3 --no-slurm --coordinator-arg=--heartbeat-interval=0.5 --coordinator-arg=--heartbeat-timeout=4
api() { on head curl -sf --max-time 10 "$URL$1"; }
sb() { on head scalebench "$@"; }
state_dir=$SCALEBENCH_TESTBED_DIR/$TB_NAME

# records_unique FILE: no record id stored twice.
records_unique() {
  json_check "$1" 'len(set(r["record_id"] for r in records)) == len(records)'
}

# --- A worker host cut off mid-run, retried on the others.
cat >"$WORK/retry.yaml" <<'YAML'
name: retry
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 4MiB, step_factor: 2, time_cap: 1}
placement: {nodes: 2, ranks_per_node: 1}
repetitions: 50
retries: 1
YAML
sb submit "$WORK/retry.yaml" >/dev/null
# Cut at the first records: the run has most of its sizes ahead of it (about 20 s).
wait_until 60 '[[ $(api /api/v1/experiments/retry | py "d[\"run_list\"][0][\"records\"]") -gt 0 ]]'
api /api/v1/experiments/retry >"$WORK/e1.json"
leader=$(py 'd["run_list"][0]["agent"]' <"$WORK/e1.json")
tb cut "$leader" >/dev/null
wait_until 20 'grep -q "agent lost: no heartbeat from $leader" "$state_dir/head/coordinator.log"'
grep -q "agent lost: no heartbeat from $leader for [4-6] s" "$state_dir/head/coordinator.log" || fail "loss not seen in time"
wait_until 120 '[[ $(api /api/v1/experiments/retry | py "d[\"finished\"]") == True ]]'
api /api/v1/experiments/retry >"$WORK/e2.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/e2.json") == ok ]] || fail "retried run not ok: $(cat "$WORK/e2.json")"
[[ $(py 'd["run_list"][0]["attempt"]' <"$WORK/e2.json") == 2 ]] || fail "not retried once"
py '[h["agent"] for h in d["run_list"][0]["hosts"]]' <"$WORK/e2.json" | grep -q "'$leader'" && fail "retried on the cut host"
# Back on the network: the coordinator tells the host's agent to stop its stale attempt, and
# nothing of that attempt runs on any host any more.
tb heal "$leader" >/dev/null
wait_until 30 '[[ $(api /api/v1/agents | py "[a[\"state\"] for a in d[\"agents\"] if a[\"id\"] == \"$leader\"][0]") == alive ]]'
wait_until 30 '! pgrep -f "run-1-1[.]" >/dev/null'
sb results --experiment retry --format json >"$WORK/retry.jsonl"
json_check "$WORK/retry.jsonl" 'len([r for r in records if r["status"] == "failed" and r["reason"].startswith("agent lost: no heartbeat from '"$leader"'")]) == 1'
# What the lost attempt delivered before the cut is kept, and the second attempt measured every
# point once more: each attempt's points once each (records before the "agent lost" record are
# the first attempt's).
attempts_complete() {
  python3 - "$1" <<'PY' || fail "$1: records of the two attempts"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
lost = [r for r in records if r["status"] == "failed"]
assert len(lost) == 1, lost
first = [(r["point"]["size"], r["metric"]) for r in records if r["status"] == "ok" and r["time"] < lost[0]["time"]]
second = [(r["point"]["size"], r["metric"]) for r in records if r["status"] == "ok" and r["time"] > lost[0]["time"]]
assert len(set(first)) == len(first) and len(set(second)) == len(second), "a point stored twice in one attempt"
assert len(second) == 13 * 3, len(second)
print(f"first attempt kept {len(first)} records, the second {len(second)}")
PY
}
attempts_complete "$WORK/retry.jsonl"
records_unique "$WORK/retry.jsonl"
echo "testbed_faults: worker $leader cut mid-run: lost within the heartbeat timeout, retried elsewhere, its stale attempt stopped"

# --- The coordinator's host cut off for 60 s in the middle of a run on the other hosts; the
# coordinator waits longer than that for heartbeats this time (restarted with a 90 s timeout).
coord_pid=$(cat "$state_dir/head/coordinator.pid")
kill -TERM "$coord_pid"
wait_until 20 '! kill -0 $coord_pid 2>/dev/null'
sed -i 's/^coordinator-args=.*/coordinator-args=--heartbeat-interval=0.5 --heartbeat-timeout=90/' "$state_dir/options"
tb reboot head >/dev/null
wait_until 30 'api /api/v1/agents >/dev/null'
# Each point runs for its time cap (more repetitions than fit in it), so that the run lasts about
# 33 x 0.5 s whatever the machine's speed: with 10 repetitions a point took only what 10 needed,
# and once the hosts' ranks yielded their cores the run could end before the cut.
cat >"$WORK/outage.yaml" <<'YAML'
name: outage
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 1MiB, step_factor: 2, time_cap: 0.5}
matrix:
  op: [all_reduce, all_gather, broadcast]
placement: {nodes: 3, ranks_per_node: 1}
repetitions: 1000
YAML
sb submit "$WORK/outage.yaml" >/dev/null
wait_until 60 '[[ $(api /api/v1/experiments/outage | py "d[\"run_list\"][0][\"records\"]") -gt 2 ]]'
tb cut head >/dev/null
sleep 60
# Meanwhile the agents measured on and held their records.
held=$(cat "$state_dir"/node*/agent/outbox.jsonl 2>/dev/null | wc -l)
tb heal head >/dev/null
[[ $held -gt 0 ]] || fail "no records held in the agents' outboxes during the outage"
wait_until 180 '[[ $(api /api/v1/experiments/outage | py "d[\"finished\"]") == True ]]'
sb results --experiment outage --format json >"$WORK/outage.jsonl"
# 3 ops x 11 sizes x 3 metrics, each once, all ok.
json_check "$WORK/outage.jsonl" 'len(records) == 3 * 11 * 3 and all(r["status"] == "ok" for r in records)'
records_unique "$WORK/outage.jsonl"
echo "testbed_faults: coordinator cut for 60 s: $held records held by the agents, all delivered once"

# --- The host that leads a run (its agent started mpirun) rebooted mid-run: its agent and every
# process on it killed, then started again. The coordinator sees the agent restarted, the attempt
# lost; the run is retried, and what the first attempt delivered is kept, nothing twice.
cat >"$WORK/reboot.yaml" <<'YAML'
name: reboot
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 4MiB, step_factor: 2, time_cap: 1}
placement: {nodes: 2, ranks_per_node: 1}
repetitions: 50
retries: 1
YAML
sb submit "$WORK/reboot.yaml" >/dev/null
wait_until 60 '[[ $(api /api/v1/experiments/reboot | py "d[\"run_list\"][0][\"records\"]") -gt 0 ]]'
victim=$(api /api/v1/experiments/reboot | py 'd["run_list"][0]["agent"]')
tb reboot "$victim" >/dev/null
wait_until 180 '[[ $(api /api/v1/experiments/reboot | py "d[\"finished\"]") == True ]]'
api /api/v1/experiments/reboot >"$WORK/r.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/r.json") == ok ]] || fail "run after the reboot: $(cat "$WORK/r.json")"
sb results --experiment reboot --format json >"$WORK/reboot.jsonl"
attempts_complete "$WORK/reboot.jsonl"
records_unique "$WORK/reboot.jsonl"
echo "testbed_faults: $victim rebooted mid-run: run retried to ok, nothing stored twice"
echo "testbed_faults: ok"
