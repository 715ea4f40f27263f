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
echo "study_host: ok in $took s"
