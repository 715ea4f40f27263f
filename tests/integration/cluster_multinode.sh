#!/usr/bin/env bash
# Three agents on distinct loopback addresses as three nodes: a run over 2 nodes x 2 ranks goes
# through mpirun with a hostfile of its agents' addresses (mpirun's daemons started on each
# through an rsh agent), its records say 2 nodes; a run needing more nodes than the cluster has
# fails at once with the reason; priorities order the queue; a running multi-node run is
# cancelled everywhere.
source "$(dirname "$0")/lib.sh"
use_local_nodes
start_coordinator "$WORK/c.db"
declare -A AGENT
for i in 2 3 4; do
  start_agent "node-$i" --address "127.0.0.$i" --slots 2
  AGENT[node-$i]=$AGENT_PID
done

cat >"$WORK/two-nodes.yaml" <<'YAML'
name: two-nodes
workload: collective
params: {backend: mpi, min_bytes: 4KiB, max_bytes: 64KiB, step_factor: 4, time_cap: 0.2}
placement: {nodes: 2, ranks_per_node: 2}
repetitions: 5
YAML
"$BIN/scalebench" submit "$WORK/two-nodes.yaml" --coordinator "$URL" | grep -q "submitted experiment two-nodes" || fail "submit"
wait_finished two-nodes 90
api /api/v1/experiments/two-nodes >"$WORK/e.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/e.json") == ok ]] || fail "run not ok: $(cat "$WORK/e.json")"
"$BIN/scalebench" results --experiment two-nodes --coordinator "$URL" --format json >"$WORK/r.jsonl"
json_check "$WORK/r.jsonl" 'len(records) == 3 * 3 and all(r["status"] == "ok" for r in records)'
json_check "$WORK/r.jsonl" 'all(r["placement"]["nodes"] == 2 and r["placement"]["ranks"] == 4 for r in records)'
json_check "$WORK/r.jsonl" 'all(len(set(r["placement"]["hosts"])) == 2 and all(h.startswith("127.0.0.") for h in r["placement"]["hosts"]) for r in records)'
# Ranks 0,1 on the first host and 2,3 on the second, local ranks 0,1 on each (Open MPI's mapping
# by slot over the hostfile, seen from inside the ranks).
json_check "$WORK/r.jsonl" 'all([(d["rank"], d["local_rank"], r["placement"]["hosts"].index(d["host"])) for d in r["placement"]["devices"]] == [(0, 0, 0), (1, 1, 0), (2, 0, 1), (3, 1, 1)] for r in records)'
leader=$(py 'd["run_list"][0]["agent"]' <"$WORK/e.json")
hosts=$(py '",".join(h["host"] for h in d["run_list"][0]["hosts"])' <"$WORK/e.json")
[[ $hosts == 127.0.0.${leader#node-},127.0.0.* ]] || fail "leader $leader is not the first host: $hosts"
# mpirun started its daemon on each host of the hostfile through the rsh agent.
for h in ${hosts//,/ }; do grep -q "^$h .*orted" "$WORK/rsh.log" || fail "no daemon started on $h"; done
grep -q "slots=2" "$WORK/agent-$leader/run-1-1.hosts" || fail "hostfile"

# More nodes than the cluster has: failed at once (no waiting), with the reason.
sed -e 's/two-nodes/four-nodes/' -e 's/nodes: 2/nodes: 4/' "$WORK/two-nodes.yaml" >"$WORK/four.yaml"
"$BIN/scalebench" submit "$WORK/four.yaml" --coordinator "$URL" >/dev/null
api /api/v1/experiments/four-nodes >"$WORK/e4.json"
[[ $(py 'd["run_list"][0]["state"]' <"$WORK/e4.json") == failed ]] || fail "4-node run not failed at once"
[[ $(py 'd["run_list"][0]["reason"]' <"$WORK/e4.json") == "needs 4 nodes; the cluster has 3 agents" ]] ||
  fail "reason: $(cat "$WORK/e4.json")"

# Priorities: while a 3-node run holds every node, a low- then a high-priority run are queued;
# the high one starts first.
cat >"$WORK/blocker.yaml" <<'YAML'
name: blocker
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 1MiB, step_factor: 4, time_cap: 0.3}
placement: {nodes: 3, ranks_per_node: 1}
repetitions: 10
YAML
"$BIN/scalebench" submit "$WORK/blocker.yaml" --coordinator "$URL" >/dev/null
wait_until 30 '[[ $(api /api/v1/experiments/blocker | py "d[\"run_list\"][0][\"state\"]") == running ]]'
# While it runs, every node reports it.
"$BIN/scalebench" agents --coordinator "$URL" >"$WORK/agents.txt"
[[ $(grep -c "alive .* 3$" "$WORK/agents.txt") == 3 ]] || fail "agents do not show the run: $(cat "$WORK/agents.txt")"
sed -e 's/two-nodes/low/' "$WORK/two-nodes.yaml" >"$WORK/low.yaml"
sed -e 's/two-nodes/high/' "$WORK/two-nodes.yaml" >"$WORK/high.yaml"
echo "priority: 10" >>"$WORK/high.yaml"
"$BIN/scalebench" submit "$WORK/low.yaml" --coordinator "$URL" >/dev/null
"$BIN/scalebench" submit "$WORK/high.yaml" --coordinator "$URL" >/dev/null
[[ $(api /api/v1/experiments/low | py 'd["run_list"][0]["state"]') == queued ]] || fail "low should wait for the blocker"
wait_finished blocker 90
wait_finished low 90
wait_finished high 90
low_start=$(api /api/v1/experiments/low | py 'd["run_list"][0]["started_at"]')
high_start=$(api /api/v1/experiments/high | py 'd["run_list"][0]["started_at"]')
python3 -c "import sys; sys.exit(0 if $high_start < $low_start else 1)" || fail "high priority started after low"

# Cancel a running 2-node run: it ends cancelled, and no rank is left on any node.
cat >"$WORK/long.yaml" <<'YAML'
name: long
workload: collective
params: {backend: mpi, min_bytes: 1KiB, max_bytes: 64MiB, step_factor: 2, time_cap: 2}
placement: {nodes: 2, ranks_per_node: 2}
repetitions: 50
YAML
"$BIN/scalebench" submit "$WORK/long.yaml" --coordinator "$URL" >/dev/null
wait_until 30 '[[ $(api /api/v1/experiments/long | py "d[\"run_list\"][0][\"records\"]") -gt 0 ]]'
run_id=$(api /api/v1/experiments/long | py 'd["run_list"][0]["run_id"]')
[[ $(run_pids "$run_id" 1 | wc -l) -ge 5 ]] || fail "mpirun and 4 ranks expected: $(run_pids "$run_id" 1)"
"$BIN/scalebench" cancel long --coordinator "$URL" | grep -q "1 running" || fail "cancel"
wait_finished long 30
[[ $(api /api/v1/experiments/long | py 'd["run_list"][0]["state"]') == cancelled ]] || fail "not cancelled"
sleep 1
[[ -z $(run_pids "$run_id" 1) ]] || fail "processes of the cancelled run still running: $(run_pids "$run_id" 1)"
echo "cluster_multinode: ok"
