#!/usr/bin/env bash
# The README's main job on a host-only machine: every point of the sweep recorded, checked, fast.
source "$(dirname "$0")/lib.sh"
# Every program answers --version the same way, as operators' scripts expect.
for p in scalebench scalebench-coordinator scalebench-agent scalebench-run; do
  out=$("$BIN/$p" --version) || fail "$p --version exited $?"
  [[ $out =~ ^$p\ [0-9]+\.[0-9]+\.[0-9]+\ \( ]] || fail "$p --version printed: $out"
done
start=$(date +%s)
"$BIN/scalebench" study "$SRC/examples/quick.yaml" --db "$WORK/q.db" >"$WORK/study.log" 2>&1 || fail "study exited $?"
took=$(($(date +%s) - start))
grep -q "\[2/2\] run" "$WORK/study.log" || fail "no progress line for the second run"
grep -q "busbw(GB/s)" "$WORK/study.log" || fail "no results table"
"$BIN/scalebench" results --db "$WORK/q.db" --format json >"$WORK/records.jsonl"
# 2 placements (1 and 2 ranks) x 17 sizes (1 KiB..64 MiB) x 3 metrics (time, algbw, busbw).
json_check "$WORK/records.jsonl" 'len(records) == 102'
json_check "$WORK/records.jsonl" 'all(r["status"] == "ok" and r["correctness"]["passed"] for r in records)'
json_check "$WORK/records.jsonl" 'sorted(set(r["point"]["size"] for r in records)) == [1024 * 2**i for i in range(17)]'
json_check "$WORK/records.jsonl" 'set(r["placement"]["ranks"] for r in records) == {1, 2}'
json_check "$WORK/records.jsonl" 'all(r["schema_version"] == 1 and r["environment"]["scalebench_version"] and r["environment"]["mpi"] for r in records)'
json_check "$WORK/records.jsonl" 'all(abs(r["value"] - r["stats"]["median"]) < 1e-12 and r["stats"]["n"] >= 3 for r in records)'
# busbw = algbw x 2(n-1)/n for all_reduce (nccl-tests' definition)
python3 - "$WORK/records.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
key = lambda r: (r["run_id"], r["point"]["size"])
alg = {key(r): r["value"] for r in recs if r["metric"] == "algbw"}
for r in recs:
    if r["metric"] == "busbw":
        n = r["placement"]["ranks"]
        assert abs(r["value"] - alg[key(r)] * 2 * (n - 1) / n) <= 1e-9 * max(1, r["value"]), r
PY
"$BIN/scalebench" results --db "$WORK/q.db" --format csv >"$WORK/records.csv"
head -1 "$WORK/records.csv" | grep -q '^record_id,run_id,experiment' || fail "csv header"
[[ $(wc -l <"$WORK/records.csv") -eq 103 ]] || fail "csv rows"
[[ $took -lt 120 ]] || fail "study took $took s (limit 120)"

# Ctrl-C in the middle of a study: exit 130, the local coordinator, agent and the running run
# stopped (none left behind), what the finished experiment measured kept in the store, and the
# interrupted run recorded as failed with the reason.
cat >"$WORK/two.yaml" <<YAML
name: first
workload: collective
params: {min_bytes: 1KiB, max_bytes: 4KiB, step_factor: 4, time_cap: 0.1}
placement: {ranks_per_node: [1]}
repetitions: 3
---
name: second
workload: command
command:
  program: /bin/sleep
  args: ["$((600 + $$ % 100))"]
  launch: once
  figures:
    x: {regex: 'x=(\d+)'}
placement: {ranks_per_node: [1]}
YAML
"$BIN/scalebench" study "$WORK/two.yaml" --db "$WORK/int.db" >"$WORK/int.log" 2>&1 &
STUDY=$!
PIDS+=("$STUDY")
wait_until 60 'pgrep -f "^/bin/sleep $((600 + $$ % 100))\$" >/dev/null'
started=$(pgrep -P "$STUDY" | tr '\n' ' ')
sleeper=$(pgrep -f "^/bin/sleep $((600 + $$ % 100))\$")
kill -INT "$STUDY"
rc=0
wait "$STUDY" || rc=$?
[[ $rc == 130 ]] || fail "interrupted study exited $rc: $(tail -n 5 "$WORK/int.log")"
grep -q "interrupted: stopping the local coordinator and agent; stored results stay in $WORK/int.db" "$WORK/int.log" ||
  fail "interrupted study: $(tail -n 5 "$WORK/int.log")"
for pid in $started $sleeper; do
  wait_until 10 "! kill -0 $pid 2>/dev/null"
done
"$BIN/scalebench" results --db "$WORK/int.db" --format json >"$WORK/int.jsonl"
json_check "$WORK/int.jsonl" 'len([r for r in records if r["experiment"] == "first" and r["status"] == "ok"]) == 6'
# The run in flight ends failed, saying why.
json_check "$WORK/int.jsonl" '[(r["experiment"], r["status"]) for r in records if r["experiment"] != "first"] == [("second", "failed")]'
json_check "$WORK/int.jsonl" 'any("was stopped (SIGTERM) while the run was in flight" in r.get("reason", "") for r in records)'
echo "study_host: ok in $took s"
