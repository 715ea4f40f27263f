#!/usr/bin/env bash
# Predict, then verify: a host-memory all_reduce measured at 2 and 3 nodes (four agents on
# 127.0.0.2..5, mpirun through the local rsh agent) predicts busbw at 4 nodes; the same study run
# later at 4 nodes scores the prediction by itself, and the API, `scalebench predictions` and the
# report show predicted, measured and error = (predicted - measured) / measured. A model of one
# bus bandwidth for all sizes (before one per size) is refused when posted, and shown when stored.
# It checks the mechanics, not how well a ring model extrapolates loopback TCP.
source "$(dirname "$0")/lib.sh"
use_local_nodes
start_coordinator "$WORK/c.db"
for i in 2 3 4 5; do start_agent "node-$i" --address "127.0.0.$i" --slots 1; done
sb() { "$BIN/scalebench" "$@" --coordinator "$URL"; }
# exit_code CMD...: the command's exit status, without stopping the test.
exit_code() { "$@" >"$WORK/out.txt" 2>"$WORK/err.txt" && echo 0 || echo $?; }

cat >"$WORK/fit.yaml" <<'YAML'
name: ar-2-3
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 64KiB, max_bytes: 4MiB, step_factor: 4, time_cap: 0.2}
placement: {nodes: [2, 3], ranks_per_node: 1}
repetitions: 10
YAML
sb submit "$WORK/fit.yaml" >/dev/null
wait_finished ar-2-3 120

# Bad input is exit 2 and says why; nothing is stored.
[[ $(exit_code sb predict --experiment ar-2-3) == 2 ]] || fail "predict without --nodes: $(cat "$WORK/err.txt")"
[[ $(exit_code sb predict --experiment ar-2-3 --nodes 0) == 2 ]] || fail "--nodes 0"
grep -q "node count from 1 to 1024" "$WORK/err.txt" || fail "--nodes 0 message: $(cat "$WORK/err.txt")"
[[ $(exit_code sb predict --experiment nope --nodes 4) == 2 ]] || fail "unknown experiment"
curl -s -X POST -d '{"op": "all_reduce"}' "$URL/api/v1/predictions" >"$WORK/bad.json"
grep -q "prediction: missing field 'experiments'" "$WORK/bad.json" || fail "POST without fields: $(cat "$WORK/bad.json")"
[[ $(api /api/v1/predictions | py 'len(d["predictions"])') == 0 ]] || fail "a refused prediction was stored"

sb predict --experiment ar-2-3 --nodes 4 >"$WORK/predict.txt" || fail "predict exited $?: $(cat "$WORK/predict.txt")"
grep -q "^prediction 1: all_reduce, variant default, 1 rank per node, at 4 nodes from nodes 2, 3 (8 time records)" \
  "$WORK/predict.txt" || fail "predict printed: $(cat "$WORK/predict.txt")"
grep -q "^model: t(n, S) = steps(n) \* a + factor(n) \* S / B(S) with a = " "$WORK/predict.txt" ||
  fail "no model line: $(cat "$WORK/predict.txt")"
grep -Eq "^ +4MiB +([0-9.]+|latency only) +[0-9.]+$" "$WORK/predict.txt" || fail "no predicted 4 MiB row: $(cat "$WORK/predict.txt")"
api /api/v1/predictions/1 >"$WORK/p.json"
python3 - "$WORK/p.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["experiments"] == [{"id": 1, "name": "ar-2-3"}], p["experiments"]
assert p["fit_nodes"] == [2, 3] and p["nodes"] == 4 and p["op"] == "all_reduce", p
assert len(p["record_ids"]) == 8 and "time_cap" not in p["params"], p
assert [r["size"] for r in p["predicted"]] == [65536, 262144, 1048576, 4194304], p["predicted"]
assert all(r["busbw"] > 0 for r in p["predicted"]), p
# One bus bandwidth per predicted size (null: the latency alone, loopback's busy cores do that), and no single one.
b = p["model"]["bus_bandwidth_by_size"]
assert [x["size"] for x in b] == [r["size"] for r in p["predicted"]], b
assert all(x["gbps"] is None or x["gbps"] > 0 for x in b), b
assert "bus_bandwidth_gbps" not in p["model"], p["model"]
assert p["scores"] == [], p["scores"]
PY
# A forged number is refused: what is stored is what the model gives.
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); b={k: p[k] for k in ("workload","variant","op","params","ranks_per_node","nodes","fit_nodes","record_ids","model","predicted")}; b["experiments"]=[1]; b["predicted"][0]["busbw"]*=2; print(json.dumps(b))' \
  "$WORK/p.json" >"$WORK/forged.json"
curl -s -X POST --data-binary @"$WORK/forged.json" "$URL/api/v1/predictions" >"$WORK/forged-answer.json"
grep -q "predicted\[0\].busbw is .*the model gives" "$WORK/forged-answer.json" || fail "forged: $(cat "$WORK/forged-answer.json")"
# A model of one bus bandwidth for all sizes (what scalebench posted before one per size) is refused, saying so.
python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); m=b["model"]; m["bus_bandwidth_gbps"]=(m.pop("bus_bandwidth_by_size")[0]["gbps"] or 2.0); b["predicted"][0]["busbw"]/=2; print(json.dumps(b))' \
  "$WORK/forged.json" >"$WORK/old.json"
curl -s -X POST --data-binary @"$WORK/old.json" "$URL/api/v1/predictions" >"$WORK/old-answer.json"
grep -q "model has one bus_bandwidth_gbps for every size, the model of an older scalebench" "$WORK/old-answer.json" ||
  fail "old model: $(cat "$WORK/old-answer.json")"
[[ $(api /api/v1/predictions | py 'len(d["predictions"])') == 1 ]] || fail "a refused prediction was stored"

# The same series at 4 nodes with another time cap (how points are sampled is no part of it),
# beside an all_gather run that must not score an all_reduce prediction.
cat >"$WORK/four.yaml" <<'YAML'
name: ar-4
workload: collective
params: {backend: mpi, min_bytes: 64KiB, max_bytes: 4MiB, step_factor: 4, time_cap: 0.3}
matrix: {op: [all_reduce, all_gather]}
placement: {nodes: 4, ranks_per_node: 1}
repetitions: 10
YAML
sb submit "$WORK/four.yaml" >/dev/null
wait_finished ar-4 120
[[ $(api /api/v1/experiments/ar-4 | py '[r["state"] for r in d["run_list"]]') == "['ok', 'ok']" ]] || fail "4-node runs not ok"
sb results --experiment ar-4 --format json >"$WORK/r4.jsonl"
api /api/v1/predictions >"$WORK/all.json"
python3 - "$WORK/all.json" "$WORK/r4.jsonl" <<'PY'
import json, statistics, sys
[p] = json.load(open(sys.argv[1]))["predictions"]
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert len(p["scores"]) == 1, p["scores"]
s = p["scores"][0]
ar_runs = sorted({r["run_id"] for r in recs if r["params"]["op"] == "all_reduce"})
assert s["experiment"] == "ar-4" and s["experiment_id"] == 2 and s["runs"] == ar_runs, s
predicted = {r["size"]: r["busbw"] for r in p["predicted"]}
assert [r["size"] for r in s["sizes"]] == sorted(predicted), s["sizes"]
for row in s["sizes"]:
    values = sorted(r["value"] for r in recs if r["metric"] == "busbw" and r["params"]["op"] == "all_reduce"
                    and r["point"]["size"] == row["size"])
    assert sorted(row["values"]) == values and row["measured"] == statistics.median(values), row
    assert row["predicted"] == predicted[row["size"]], row
    err = (row["predicted"] - row["measured"]) / row["measured"] * 100
    assert abs(row["error_pct"] - err) <= 1e-9 * max(1, abs(err)), row
worst = max(abs(r["error_pct"]) for r in s["sizes"] if r["size"] >= 1 << 20)
assert abs(s["max_abs_error_pct"] - worst) <= 1e-9 * max(1, worst), s
assert s["met"] == (worst <= 10) and s["goal_pct"] == 10, s
PY

# The CLI shows the same numbers: a table with the verdict, CSV with the error, the store file alike.
sb predictions >"$WORK/table.txt"
[[ $(grep -c "^1 .*all_reduce .* 4 .*ar-4 (id 2)$" "$WORK/table.txt") == 4 ]] || fail "table: $(cat "$WORK/table.txt")"
grep -Eq "^prediction 1 \(all_reduce, .*4 nodes\) against ar-4 \(id 2\): max \|error\| from 1 MiB [0-9.]+%, goal within 10%: (met|missed)$" \
  "$WORK/table.txt" || fail "no verdict line: $(cat "$WORK/table.txt")"
sb predictions 1 --format csv >"$WORK/p.csv"
python3 - "$WORK/p.csv" "$WORK/all.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
s = json.load(open(sys.argv[2]))["predictions"][0]["scores"][0]
assert len(rows) == 4 and all(r["experiment"] == "ar-4" for r in rows), rows
for r, want in zip(rows, s["sizes"]):
    p, m, e = float(r["predicted_busbw_gbps"]), float(r["measured_busbw_gbps"]), float(r["error_pct"])
    assert int(r["size"]) == want["size"] and abs(e - (p - m) / m * 100) <= 1e-6 * max(1, abs(e)), r
PY
"$BIN/scalebench" predictions --db "$WORK/c.db" --format json >"$WORK/db.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))["predictions"]; sys.exit(a != b)' \
  "$WORK/db.json" "$WORK/all.json" || fail "the store file's predictions differ from the API's"

# The report of the experiment that landed has the section, in every format.
sb report --experiment ar-4 --out "$WORK/report" >/dev/null
grep -q "^## Predicted against measured" "$WORK/report/report.md" || fail "no section in report.md"
grep -Eq "^Prediction 1 \(.*\) against ar-4: max \|error\| from 1 MiB [0-9.]+%, (within|outside) the 10% goal\.$" \
  "$WORK/report/report.md" || fail "no verdict in report.md"
grep -q "<h2>Predicted against measured</h2>" "$WORK/report/index.html" || fail "no section in index.html"
[[ $(($(wc -l <"$WORK/report/tables/predicted-vs-measured.csv") - 1)) == 4 ]] || fail "csv table rows"
py '[s["title"] for s in d["sections"]][-1]' <"$WORK/report/report.json" | grep -qx "Predicted against measured" ||
  fail "no section in report.json"
ls "$WORK"/report/charts/predicted-vs-measured-1-*.svg >/dev/null || fail "no chart"
# The experiment the prediction came from was not measured at 4 nodes: its report has no such section.
sb report --experiment ar-2-3 --out "$WORK/report-fit" >/dev/null
! grep -q "Predicted against measured" "$WORK/report-fit/report.md" || fail "section in the fit experiment's report"

# A store from before one bus bandwidth per size holds predictions whose model has one
# bus_bandwidth_gbps: such a prediction, scored, still loads and shows, and the report says which model made it.
python3 - "$WORK/c.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
p = json.loads(db.execute("SELECT json FROM predictions WHERE id=1").fetchone()[0])
m = p["model"]
m["formula"] = "t(n, S) = steps(n) * a + factor(n) * S / B"
m["bus_bandwidth_gbps"] = (m.pop("bus_bandwidth_by_size")[0]["gbps"] or 2.0)
db.execute("UPDATE predictions SET json=? WHERE id=1", (json.dumps(p),))
db.commit()
PY
api /api/v1/predictions/1 | py '"bus_bandwidth_gbps" in d["model"] and len(d["scores"]) == 1' | grep -qx True ||
  fail "the old prediction does not load with its score"
sb predictions >"$WORK/old-table.txt" || fail "predictions with an old model: $(cat "$WORK/old-table.txt")"
[[ $(grep -c "^1 .*all_reduce .* 4 .*ar-4 (id 2)$" "$WORK/old-table.txt") == 4 ]] || fail "old: $(cat "$WORK/old-table.txt")"
"$BIN/scalebench" predictions --db "$WORK/c.db" >/dev/null || fail "predictions --db with an old model"
sb report --experiment ar-4 --out "$WORK/report-old" >/dev/null || fail "report with an old model"
grep -q "It was made by an earlier model, with one B for all sizes\.$" "$WORK/report-old/report.md" ||
  fail "the report does not say the old model made it"
echo "predict_then_measure: ok"
