#!/usr/bin/env bash
# Across real hosts: a testbed of 3 nodes (network, UTS and mount namespaces, each with sshd, an
# agent and slurmd) and head (coordinator, slurmctld, munged). A host-memory collective study over
# the 3 nodes goes through mpirun over ssh; the same study goes through SLURM as `sbatch -N 3` of
# deploy/slurm's batch script, its runs srun --mpi=pmix steps across the hosts.
# Skipped (77) only where this machine cannot make namespaces or lacks sshd or SLURM.
if [[ $(id -u) -ne 0 ]] || ! unshare --net --uts --mount true 2>/dev/null; then
  echo "testbed_cluster: skipped: needs root and network namespaces"
  exit 77
fi
for p in sshd slurmctld slurmd munged ip; do
  command -v "$p" >/dev/null || { echo "testbed_cluster: skipped: $p is not installed (scripts/install-test-deps.sh)"; exit 77; }
done
export TMPDIR=/var/tmp
source "$(dirname "$0")/lib.sh"
start_testbed 3

# Each host has its own name and address, and reaches the others by name over ssh with the
# testbed's keys (host keys checked).
for h in node1 node2 node3; do [[ $(on "$h" hostname) == "$h" ]] || fail "hostname of $h"; done
[[ $(on node1 ssh -F "$SCALEBENCH_TESTBED_DIR/$TB_NAME/ssh_config" node3 hostname) == node3 ]] || fail "ssh node1 -> node3"
on node2 cat /proc/net/fib_trie | grep -q "198.18.0.12" || fail "node2's address"

cat >"$WORK/three.yaml" <<'YAML'
name: three-hosts
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 4KiB, max_bytes: 256KiB, step_factor: 8, time_cap: 0.2}
placement: {nodes: 3, ranks_per_node: 2}
repetitions: 5
YAML
on head scalebench submit "$WORK/three.yaml" >/dev/null || fail "submit"
on head scalebench wait three-hosts --timeout 120 >"$WORK/wait.log" 2>&1 || fail "wait: $(cat "$WORK/wait.log")"
on head scalebench results --experiment three-hosts --format json >"$WORK/r.jsonl"
json_check "$WORK/r.jsonl" 'len(records) == 3 * 3 and all(r["status"] == "ok" and r["correctness"]["passed"] for r in records)'
# Three distinct hostnames, and each rank ran on the machine its placement names (the rank's own
# hostname, read inside the rank).
json_check "$WORK/r.jsonl" 'all(sorted(r["placement"]["hosts"]) == ["node1", "node2", "node3"] for r in records)'
json_check "$WORK/r.jsonl" 'all(b["machine"] == b["host"] for r in records for b in r["environment"]["binding"])'
# Ranks map to hosts as planned: two consecutive ranks on each host of the run's host list, in
# its order, local ranks 0 and 1.
on head curl -sf --max-time 10 "$URL/api/v1/experiments/three-hosts" >"$WORK/e.json"
planned=$(py '",".join(h["host"] for h in d["run_list"][0]["hosts"])' <"$WORK/e.json")
json_check "$WORK/r.jsonl" "all([(d['rank'], d['local_rank'], d['host']) for d in r['placement']['devices']] == [(i, i % 2, '$planned'.split(',')[i // 2]) for i in range(6)] for r in records)"
# mpirun started its daemons over ssh: each other host's sshd let the testbed's key in.
leader=${planned%%,*}
for h in ${planned//,/ }; do
  [[ $h == "$leader" ]] && continue
  grep -q "Accepted publickey for root from 198.18.0.1[0-9]" "$SCALEBENCH_TESTBED_DIR/$TB_NAME/$h/sshd.log" || fail "no ssh login on $h"
done
# Each host's topology is recorded with the coordinator: its cores and NUMA nodes as its agent saw them.
on head curl -sf --max-time 10 "$URL/api/v1/agents" >"$WORK/agents.json"
python3 - "$WORK/agents.json" <<'PY' || fail "agents' topology: $(cat "$WORK/agents.json")"
import json, sys
agents = json.load(open(sys.argv[1]))
agents = agents.get("agents", agents) if isinstance(agents, dict) else agents
by_id = {a["id"]: a for a in agents}
assert sorted(by_id) == ["node1", "node2", "node3"], sorted(by_id)
for a in by_id.values():
    assert a["hostname"] == a["id"], a
    assert a["topology"]["gpus"] == [] and "links" in a["topology"], a  # host-memory hosts: no GPU
PY

# SLURM across the 3 hosts: the batch script's coordinator on the job's first node, an agent on
# each, and each run a job step started with srun --mpi=pmix across the hosts.
sed -e 's/three-hosts/slurm-three/' "$WORK/three.yaml" >"$WORK/slurm.yaml"
# Why a run of the job failed: its records' errors, the agents' log, each run's own log.
slurm_job_failure() {
  "$BIN/scalebench" results --db "$WORK/out/scalebench.db" --format json 2>&1 |
    python3 -c 'import json,sys; [print("record:", r.get("status"), r.get("error", r.get("reason", ""))) for r in map(json.loads, sys.stdin)]'
  tail -n 30 "$WORK/out/agents.log" "$WORK/out/coordinator.log" 2>&1
  tail -n 30 "$SCALEBENCH_TESTBED_DIR/$TB_NAME"/node*/tmp/scalebench-agent-*/run-*.log 2>&1
}
on head sbatch --parsable --wait -N 3 --time=5 --chdir="$WORK" --output="$WORK/job.log" \
  --export=ALL,SCALEBENCH_BIN="$BIN" "$SRC/deploy/slurm/scalebench.sbatch" "$WORK/slurm.yaml" "$WORK/out" >"$WORK/job.id" ||
  fail "the SLURM job failed: $(tail -n 20 "$WORK/job.log")
$(slurm_job_failure)"
grep -q "scalebench.sbatch: job [0-9]*, 3 node(s), coordinator http://node1:" "$WORK/job.log" || fail "job: $(head "$WORK/job.log")"
"$BIN/scalebench" results --db "$WORK/out/scalebench.db" --format json >"$WORK/s.jsonl"
json_check "$WORK/s.jsonl" 'len(records) == 9 and all(r["status"] == "ok" for r in records)'
json_check "$WORK/s.jsonl" 'all(sorted(r["placement"]["hosts"]) == ["node1", "node2", "node3"] for r in records)'
json_check "$WORK/s.jsonl" 'all(b["machine"] == b["host"] for r in records for b in r["environment"]["binding"])'
# Two consecutive ranks on each of the 3 hosts, local ranks 0 and 1, the hosts in SLURM's order
# (slurm.conf's: node1, node2, node3), whichever agent led the run.
json_check "$WORK/s.jsonl" "all([(d['rank'], d['local_rank'], d['host']) for d in r['placement']['devices']] == [(i, i % 2, 'node%d' % (i // 2 + 1)) for i in range(6)] for r in records)"
for f in index.html report.md report.json; do [[ -s $WORK/out/report/$f ]] || fail "report/$f missing"; done
job=$(cut -d';' -f1 "$WORK/job.id")
# The run over 3 nodes was one job step across them, started by its leading agent with srun and
# wired by PMIx: the agents' log and the run's own log (its first line) show the step.
step="srun --mpi=pmix --nodes=3 --ntasks=6 --ntasks-per-node=2 --nodelist=node[123],node[123],node[123] "
grep -q "run [0-9]*: $step" "$WORK/out/agents.log" || fail "no srun step over 3 nodes in agents.log: $(grep ': run ' "$WORK/out/agents.log")"
shopt -s nullglob
logs=("$SCALEBENCH_TESTBED_DIR/$TB_NAME"/node*/tmp/scalebench-agent-"$job"/run-*.log)
shopt -u nullglob
[[ ${#logs[@]} -eq 1 ]] || fail "want the one run's log, found: ${logs[*]}"
head -n 1 "${logs[0]}" | grep -q "^# $step" || fail "run log ${logs[0]} starts: $(head -n 1 "${logs[0]}")"
for n in node1 node2 node3; do
  head -n 1 "${logs[0]}" | grep -q "nodelist=[^ ]*$n" || fail "$n is not in the step's node list"
done
# Every host's slurmd launched that step's tasks (step 0 is the agents').
for h in node1 node2 node3; do
  grep -q "launch task StepId=$job.1 " "$SCALEBENCH_TESTBED_DIR/$TB_NAME/$h/slurmd.log" ||
    fail "slurmd on $h did not launch step $job.1: $(grep 'launch task' "$SCALEBENCH_TESTBED_DIR/$TB_NAME/$h/slurmd.log")"
done
echo "testbed_cluster: ok"
