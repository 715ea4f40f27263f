#!/usr/bin/env bash
# scalebench accept on four loopback "nodes" (host workloads only): one of them is made slow from
# outside the product, its ranks stopped for 9.5 ms of every 10 ms: the all-reduce between the
# nodes falls below its band (a fifth of the figure of a baseline run on two healthy nodes), the
# bisection names that node, the others pass, the exit code is 1 and the drain line names it.
# Before that, a bad rule file is refused with file:line:column and the field.
source "$(dirname "$0")/lib.sh"
use_local_nodes
start_coordinator "$WORK/c.db"
for i in 2 3 4 5; do
  if [[ $i == 4 ]]; then
    # The slow node: everything it starts inherits this mark (its mpirun and ranks when it leads).
    SCALEBENCH_TEST_SLOW_NODE=1 start_agent "node-$i" --address "127.0.0.$i" --slots 1
  else
    start_agent "node-$i" --address "127.0.0.$i" --slots 1
  fi
done

# A bad rule file: exit 2, file:line:column and the field.
cat >"$WORK/bad.yaml" <<'YAML'
rules:
  - name: all-reduce-busbw
    select: {workload: collective, metric: busbw}
    band: {from: baseline, fraction: -1}
YAML
set +e
"$BIN/scalebench" accept --coordinator "$URL" --rules "$WORK/bad.yaml" >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "a bad rule file exited $rc: $(cat "$WORK/bad.err")"
grep -q "bad.yaml:4:38: field 'rules\[0\].band.fraction': expected a number" "$WORK/bad.err" ||
  fail "no file:line:column: $(cat "$WORK/bad.err")"
[[ $("$BIN/scalebench" status --coordinator "$URL" | wc -l) == 1 ]] || fail "bad input ran something"

# The baseline: the battery's all-reduce (4 MiB, one rank per node) on two healthy nodes.
cat >"$WORK/baseline.yaml" <<'YAML'
name: baseline
workload: collective
params: {op: all_reduce, min_bytes: 4MiB, max_bytes: 4MiB, step_factor: 1, time_cap: 1}
placement: {nodes: 2, ranks_per_node: 1, agents: [node-2, node-3]}
repetitions: 20
YAML
"$BIN/scalebench" submit "$WORK/baseline.yaml" --coordinator "$URL" >/dev/null
wait_finished baseline 60
"$BIN/scalebench" results --experiment baseline --coordinator "$URL" --format json >"$WORK/baseline.jsonl"
json_check "$WORK/baseline.jsonl" 'sorted(set(r["placement"]["hosts"][0] for r in records) | set(r["placement"]["hosts"][1] for r in records)) == ["127.0.0.2", "127.0.0.3"]'
cat >"$WORK/site.yaml" <<'YAML'
rules:
  - name: all-reduce-busbw
    select: {workload: collective, metric: busbw}
    band: {from: baseline, fraction: 0.2, match: [size]}
YAML
# A fifth, not a half: on a busy 2-core host a healthy pair was seen at 0.29 of the baseline,
# while every pair holding the stopped node stayed under 0.11 of it (under another busy process too).

# Node-4's ranks (scalebench-run, marked, or started by mpirun's daemon in its TMPDIR when another
# node leads) are stopped for 9.5 ms of every 10 ms: awake for less time than one 4 MiB all-reduce
# takes. Neither a CPU quota (a cgroup's 1 ms of every 10 ms) nor 10 ms awake of every 100 ms
# slowed every all-reduce: the socket buffers let most of them finish inside the CPU time or the
# window given, and node-4's pair measured fast on a 2-core host. Only the ranks: a stopped mpirun
# forwards the SIGCONTs to its job, and one such run failed.
python3 - "$WORK/node-tmp/127.0.0.4" >"$WORK/throttle.log" 2>&1 <<'PY' &
import os, signal, sys, time
tmp = ("TMPDIR=" + sys.argv[1]).encode()
me = os.getpid()
# Ahead of the ranks' busy polling: else on 2 cores this process woke late and the 0.5 ms awake
# became several, long enough for an all-reduce.
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    try:
        os.nice(-20)
    except OSError:
        print("throttle: neither SCHED_FIFO nor nice -20: node-4 may wake late", flush=True)
def marked():
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"SCALEBENCH_TEST_SLOW_NODE=1" in env or tmp in env:
            try:
                if open(f"/proc/{p}/comm").read().strip() == "scalebench-run":
                    out.append(int(p))
            except OSError:
                pass
    return out
pids, refreshed = [], 0.0
while True:
    if time.monotonic() - refreshed > 0.05:  # every 5 cycles: a short run is caught at its start
        pids, refreshed = marked(), time.monotonic()
    for sig, pause in ((signal.SIGSTOP, 0.0095), (signal.SIGCONT, 0.0005)):
        for p in pids:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        time.sleep(pause)
PY
THROTTLE_PID=$!
PIDS+=("$THROTTLE_PID")
# When the test ends, nothing of node-4 is left stopped, and what the test started is ended
# whether it passed or failed (set +e: under errexit, a failed run's `(exit $rc)` ended the trap
# before cleanup, and its coordinator and agents ran on, loading the next runs).
trap 'rc=$?; kill -TERM $THROTTLE_PID 2>/dev/null; sleep 0.2
for p in $(grep -las -e SCALEBENCH_TEST_SLOW_NODE=1 -e "TMPDIR=$WORK/node-tmp/127.0.0.4" /proc/[0-9]*/environ | cut -d/ -f3); do kill -CONT $p 2>/dev/null; done
set +e; (exit $rc); cleanup' EXIT

start=$(date +%s)
set +e
"$BIN/scalebench" accept --level quick --coordinator "$URL" --rules "$WORK/site.yaml" \
  --baseline "$WORK/baseline.jsonl" --json "$WORK/verdicts.json" >"$WORK/accept.log" 2>&1
rc=$?
set -e
took=$(($(date +%s) - start))
cat "$WORK/accept.log"
[[ $rc == 1 ]] || fail "accept exited $rc (1 expected: a node failed)"
python3 - "$WORK/verdicts.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
b = v.get("bisection")
assert b and b["named"] == ["node-4"], b
nodes = {n["host"]: n["outcome"] for n in v["nodes"]}
assert nodes.get("node-4") == "fail", nodes
for n in ("node-2", "node-3", "node-5"):
    assert nodes.get(n) == "pass", (n, nodes)
assert nodes.get("") == "fail", nodes  # the all-reduce between the nodes
assert len(v["drain"]) == 1 and "nodename=node-4 " in v["drain"][0], v["drain"]
# Every step measured disjoint groups or a pair with a good node, and the slow ones held node-4.
for step in b["steps"]:
    for g in step:
        assert g["slow"] == ("node-4" in g["nodes"]), step
PY
grep -q '^  scontrol update nodename=node-4 state=drain reason="scalebench accept: ' "$WORK/accept.log" || fail "no drain line"
grep -q "bisection: node-4 makes the collective slow" "$WORK/accept.log" || fail "bisection line"
grep -q " left$" "$WORK/accept.log" || fail "no ETA in the progress lines"
# The verdicts reached the coordinator's /metrics: node-4 failed (the bisection named it), the
# others have no failed check (on host memory their configuration checks are skipped: no series).
curl -sf "$URL/metrics" | python3 -c '
import re, sys
worst = {}
for line in sys.stdin:
    m = re.match(r"scalebench_node_health\{.*Hostname=\"([^\"]*)\".*\} (\S+)$", line.strip())
    if m:
        worst[m.group(1)] = min(worst.get(m.group(1), 1.0), float(m.group(2)))
assert worst.get("node-4") == 0.0, worst
for n in ("node-2", "node-3", "node-5"):
    assert worst.get(n, 1.0) > 0.0, (n, worst)
' || fail "scalebench_node_health on /metrics"
echo "accept_host: ok in $took s"
