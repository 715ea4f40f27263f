#!/usr/bin/env bash
# Faults a cluster survives, with real processes on three loopback "nodes":
# - an agent killed (SIGKILL) in the middle of a 2-node run: the run fails "agent lost" within
#   the heartbeat timeout, its ranks do not outlive the agent, and (retries: 1) it is run again
#   on the other agents, the lost attempt's record kept;
# - the same with the run's other node's agent (not the leader): its attempt is lost all the
#   same, the leader is told to stop it (no rank of it is left on any node), and it is run again;
#   and that node's host dying whole (agent and ranks): mpirun fails at once, the failure the
#   leader reports waits for the node, which is lost, and the run is retried;
# - a rank that hangs in a 2-node MPI job: at the timeout the whole job is killed on every node;
# - the coordinator killed and restarted in the middle of a multi-node study: queued and
#   finished runs survive, the agents carry on by themselves, the study completes;
# - the store locked by another process: a clear error, nothing lost, the store intact.
source "$(dirname "$0")/lib.sh"
use_local_nodes
start_coordinator "$WORK/f.db"
declare -A AGENT
for i in 2 3 4; do
  start_agent "node-$i" --address "127.0.0.$i" --slots 2
  AGENT[node-$i]=$AGENT_PID
done

# --- An agent lost mid-run, retried elsewhere.
cat >"$WORK/retry.yaml" <<'YAML'
name: retry
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 16MiB, step_factor: 2, time_cap: 0.4}
placement: {nodes: 2, ranks_per_node: 2}
repetitions: 20
retries: 1
YAML
"$BIN/scalebench" submit "$WORK/retry.yaml" --coordinator "$URL" >/dev/null
wait_until 60 '[[ $(api /api/v1/experiments/retry | py "d[\"run_list\"][0][\"records\"]") -gt 2 ]]'
api /api/v1/experiments/retry >"$WORK/e1.json"
run_id=$(py 'd["run_list"][0]["run_id"]' <"$WORK/e1.json")
leader=$(py 'd["run_list"][0]["agent"]' <"$WORK/e1.json")
follower=$(py 'd["run_list"][0]["hosts"][1]["agent"]' <"$WORK/e1.json")
spare=$(for a in node-2 node-3 node-4; do if [[ $a != "$leader" && $a != "$follower" ]]; then echo "$a"; fi; done)
[[ $(run_pids "$run_id" 1 | wc -l) -ge 5 ]] || fail "mpirun and 4 ranks expected: $(run_pids "$run_id" 1)"
kill -KILL "${AGENT[$leader]}"
wait_until 20 'grep -q "agent lost: no heartbeat from $leader" "$WORK/coordinator.log"'
# Lost within the heartbeat timeout (4 s), give or take the liveness check's period.
grep -q "agent lost: no heartbeat from $leader for [4-6] s" "$WORK/coordinator.log" || fail "loss not seen in time"
# mpirun went with its agent (it had asked for SIGTERM at its parent's death), and so did every rank.
wait_until 10 '[[ -z $(run_pids "$run_id" 1) ]]'
wait_finished retry 120
api /api/v1/experiments/retry >"$WORK/e2.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/e2.json") == ok ]] || fail "retried run not ok: $(cat "$WORK/e2.json")"
[[ $(py 'd["run_list"][0]["attempt"]' <"$WORK/e2.json") == 2 ]] || fail "not retried once"
py 'sorted(h["agent"] for h in d["run_list"][0]["hosts"])' <"$WORK/e2.json" | grep -q "$spare" || fail "not retried on the spare agent"
py '[h["agent"] for h in d["run_list"][0]["hosts"]]' <"$WORK/e2.json" | grep -qv "'$leader'" || fail "retried on the lost agent"
"$BIN/scalebench" results --experiment retry --coordinator "$URL" --format json >"$WORK/retry.jsonl"
# The lost attempt's record stays, saying why; the second attempt's records are all ok.
json_check "$WORK/retry.jsonl" 'len([r for r in records if r["status"] == "failed" and r["reason"].startswith("agent lost: no heartbeat from '"$leader"'")]) == 1'
json_check "$WORK/retry.jsonl" 'len([r for r in records if r["status"] == "ok" and r["metric"] == "busbw"]) >= 15'
grep -q "lost" <<<"$(api /api/v1/agents)" || fail "the killed agent is not shown lost"

# --- The other node's agent lost mid-run (not the leader's): the attempt is lost, the leader
# stops it, the run is retried. Long enough (1 KiB..64 MiB, up to 1 s a size) to be running
# still when the node is found lost.
# restart_agent NAME: a new process of a killed agent, on its own address.
restart_agent() {
  start_agent "$1" --address "127.0.0.${1#node-}" --slots 2
  AGENT[$1]=$AGENT_PID
}
# node_pids ADDRESS: the processes on that "node" (mpirun's daemon there and its ranks), by the
# TMPDIR local_rsh.sh gives each node.
node_pids() { grep -lz "^TMPDIR=$WORK/node-tmp/$1\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
restart_agent "$leader"
# follower_case NAME HOW: a 2-node run with retries: 1 whose other node goes (HOW: agent, its
# agent killed; host, its agent and every process of the node killed). Sets RUN and NODE.
follower_case() {
  sed -e "s/name: retry/name: $1/" -e 's/max_bytes: 16MiB/max_bytes: 64MiB/' -e 's/time_cap: 0.4/time_cap: 1/' \
    "$WORK/retry.yaml" >"$WORK/$1.yaml"
  "$BIN/scalebench" submit "$WORK/$1.yaml" --coordinator "$URL" >/dev/null
  wait_until 60 '[[ $(api /api/v1/experiments/'"$1"' | py "d[\"run_list\"][0][\"records\"]") -gt 2 ]]'
  api "/api/v1/experiments/$1" >"$WORK/$1-1.json"
  RUN=$(py 'd["run_list"][0]["run_id"]' <"$WORK/$1-1.json")
  NODE=$(py 'd["run_list"][0]["hosts"][1]["agent"]' <"$WORK/$1-1.json")
  local address
  address=$(py 'd["run_list"][0]["hosts"][1]["host"]' <"$WORK/$1-1.json")
  [[ $(run_pids "$RUN" 1 | wc -l) -ge 5 ]] || fail "$1: mpirun and 4 ranks expected: $(run_pids "$RUN" 1)"
  if [[ $2 == host ]]; then
    [[ -n $(node_pids "$address") ]] || fail "$1: no process of the run on $address"
    kill -KILL "${AGENT[$NODE]}" $(node_pids "$address")
  else
    kill -KILL "${AGENT[$NODE]}"
  fi
  wait_until 20 'grep -q "agent lost: no heartbeat from $NODE" "$WORK/coordinator.log"'
  # Its leader was told to stop attempt 1: mpirun and every rank of it, on both nodes, are gone.
  wait_until 15 '[[ -z $(run_pids "$RUN" 1) ]]'
  wait_finished "$1" 120
  api "/api/v1/experiments/$1" >"$WORK/$1-2.json"
  [[ $(py 'd["run_list"][0]["state"]' <"$WORK/$1-2.json") == ok ]] || fail "$1: retried run not ok: $(cat "$WORK/$1-2.json")"
  [[ $(py 'd["run_list"][0]["attempt"]' <"$WORK/$1-2.json") == 2 ]] || fail "$1: not retried once"
  py '[h["agent"] for h in d["run_list"][0]["hosts"]]' <"$WORK/$1-2.json" | grep -qv "'$NODE'" || fail "$1: retried on the lost node"
  "$BIN/scalebench" results --experiment "$1" --coordinator "$URL" --format json >"$WORK/$1.jsonl"
  # Attempt 1's record names the lost node; attempt 2's records are all ok.
  json_check "$WORK/$1.jsonl" 'len([r for r in records if r["status"] == "failed" and r["reason"].startswith("agent lost: no heartbeat from '"$NODE"'")]) == 1'
  json_check "$WORK/$1.jsonl" 'len([r for r in records if r["status"] == "ok" and r["metric"] == "busbw"]) >= 17'
  [[ -z $(run_pids "$RUN" 1) ]] || fail "$1: processes of attempt 1 left: $(run_pids "$RUN" 1)"
}
follower_case follower agent
grep -q "run $RUN: attempt 1 lost (agent lost: no heartbeat from $NODE" "$WORK/coordinator.log" || fail "follower: not lost"
# The host dying whole: mpirun fails at once; the leader's failure waits for the node, which is lost.
restart_agent "$NODE"
follower_case follower-host host
grep -q "run $RUN attempt 1: its end waits for a heartbeat from $NODE" "$WORK/coordinator.log" ||
  fail "follower-host: the leader's failure did not wait for the node"
grep -q "run $RUN: attempt 1 lost (agent lost: no heartbeat from $NODE" "$WORK/coordinator.log" || fail "follower-host: not lost"
restart_agent "$NODE"

# --- A hung rank: the whole 2-node job is killed at the timeout, on every node.
cat >"$WORK/hang.yaml" <<YAML
name: hang
workload: command
command:
  program: $SRC/tests/integration/programs/hang_rank.sh
  args: ["$WORK/hang.pids"]
  launch: mpi
  figures:
    value: {regex: 'value=(\d+)', unit: ""}
placement: {nodes: 2, ranks_per_node: 2}
timeout: 6s
YAML
"$BIN/scalebench" submit "$WORK/hang.yaml" --coordinator "$URL" >/dev/null
wait_finished hang 40
api /api/v1/experiments/hang >"$WORK/h.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/h.json") == timeout ]] || fail "hung run: $(cat "$WORK/h.json")"
[[ $(wc -l <"$WORK/hang.pids") == 4 ]] || fail "not every rank started: $(cat "$WORK/hang.pids")"
# Every rank, the hung one on the other node included, is gone within moments of the timeout.
all_gone() {
  local rank pid
  while read -r rank pid _; do kill -0 "$pid" 2>/dev/null && [[ $(ps -o stat= -p "$pid") != Z* ]] && return 1; done <"$WORK/hang.pids"
  return 0
}
wait_until 10 all_gone
# Each rank was bound to its host of the placement: ranks 0,1 on the first, 2,3 on the second.
want=$(py '"\n".join("%d %s %d" % (r, d["run_list"][0]["hosts"][r // 2]["host"], r % 2) for r in range(4))' <"$WORK/h.json")
[[ $(awk '{print $1, $3, $4}' "$WORK/hang.pids" | sort) == "$want" ]] || fail "ranks' hosts: $(cat "$WORK/hang.pids")"
hang_run=$(py 'd["run_list"][0]["run_id"]' <"$WORK/h.json")
wait_until 10 '[[ -z $(run_pids "$hang_run" 1) ]]'
hang_hosts=$(py '",".join(h["host"] for h in d["run_list"][0]["hosts"])' <"$WORK/h.json")
grep -q "^${hang_hosts#*,} .*orted" "$WORK/rsh.log" || fail "no daemon on the second node"

# --- The coordinator killed and restarted in the middle of a multi-node study.
cat >"$WORK/study.yaml" <<'YAML'
name: study
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 1MiB, step_factor: 4, time_cap: 0.3}
matrix:
  op: [all_reduce, all_gather, reduce_scatter, broadcast]
placement: {nodes: 2, ranks_per_node: 2}
repetitions: 10
YAML
"$BIN/scalebench" submit "$WORK/study.yaml" --coordinator "$URL" >/dev/null
wait_until 60 '[[ $(api /api/v1/experiments/study | py "d[\"done\"]") -ge 1 ]]'
kill -KILL "$COORD_PID"
wait "$COORD_PID" 2>/dev/null || true
sleep 2  # the agents go on measuring and hold what they measured
start_coordinator "$WORK/f.db" "$PORT"
wait_finished study 120
"$BIN/scalebench" results --db "$WORK/f.db" --experiment study --format json >"$WORK/study.jsonl"
# 4 ops x 6 sizes x 3 metrics, each once, all ok, each over 2 nodes.
json_check "$WORK/study.jsonl" 'len(records) == 4 * 6 * 3 and all(r["status"] == "ok" and r["placement"]["nodes"] == 2 for r in records)'
json_check "$WORK/study.jsonl" 'len(set((r["run_id"], r["point"]["size"], r["metric"]) for r in records)) == 72'
# What was finished before the crash is all still there.
[[ $(api /api/v1/experiments/retry | py 'd["run_list"][0]["state"]') == ok ]] || fail "earlier run lost"

# --- The store locked by another process: submits get a clear error, nothing is lost, and the
# store is intact once the lock is gone.
python3 - "$WORK/f.db" "$WORK/locked" <<'PY' &
import sqlite3, sys, time, os
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(15)
db.execute("ROLLBACK")
PY
LOCK_PID=$!
PIDS+=("$LOCK_PID")
wait_until 10 '[[ -e $WORK/locked ]]'
sed -e 's/name: study/name: during-lock/' -e 's/all_reduce, all_gather, reduce_scatter, broadcast/all_reduce/' \
  "$WORK/study.yaml" >"$WORK/lock.yaml"
set +e
out=$("$BIN/scalebench" submit "$WORK/lock.yaml" --coordinator "$URL" 2>&1); rc=$?
set -e
[[ $rc -ne 0 ]] || fail "submit while the store is locked succeeded"
grep -q "database is locked" <<<"$out" || fail "unclear error: $out"
grep -q "f.db" <<<"$out" || fail "the error does not name the store: $out"
wait "$LOCK_PID"
[[ $(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$WORK/f.db") == ok ]] || fail "store not intact"
"$BIN/scalebench" submit "$WORK/lock.yaml" --coordinator "$URL" >/dev/null || fail "submit after the lock"
wait_finished during-lock 60
"$BIN/scalebench" results --db "$WORK/f.db" --experiment study --format json | wc -l | grep -qx 72 || fail "records lost"
echo "cluster_faults: ok"
