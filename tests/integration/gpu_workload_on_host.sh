#!/usr/bin/env bash
# A GPU-only workload (train) on a cluster without GPUs: every run ends skipped with the reason,
# as a record a user reads, never as a failed run; the experiment finishes and `wait` exits 0.
# The same study standalone (`scalebench study`) exits 0 and says why. Skipped (77) where this
# machine's agent finds GPUs: there the runs would train.
source "$(dirname "$0")/lib.sh"
start_coordinator "$WORK/c.db"
start_agent node-a
"$BIN/scalebench" agents --coordinator "$URL" --format json >"$WORK/agents.json"
if ! python3 -c 'import json,sys; sys.exit(0 if all(not a["gpus"] for a in json.load(open(sys.argv[1]))) else 1)' \
  "$WORK/agents.json"; then
  echo "skipped: the agent on this machine has GPUs"
  exit 77
fi
cat >"$WORK/train.yaml" <<'YAML'
name: train-on-host
workload: train
params: {model: tiny}
matrix:
  precision: [fp32, bf16]
YAML
"$BIN/scalebench" submit "$WORK/train.yaml" --coordinator "$URL" | grep -q "submitted experiment train-on-host" ||
  fail "submit"
wait_finished train-on-host 30
out=$("$BIN/scalebench" wait train-on-host --coordinator "$URL") || fail "wait exited $?: $out"
grep -q "every run ended ok" <<<"$out" || fail "wait: $out"
"$BIN/scalebench" results --experiment train-on-host --coordinator "$URL" --format json >"$WORK/r.jsonl"
# One record per run, skipped, with the reason, and no failed run.
json_check "$WORK/r.jsonl" 'len(records) == 2'
json_check "$WORK/r.jsonl" 'all(r["status"] == "skipped" for r in records)'
json_check "$WORK/r.jsonl" 'all(r["reason"] == "the train workload needs GPUs; no agent has any" for r in records)'
json_check "$WORK/r.jsonl" 'sorted(r["params"]["precision"] for r in records) == ["bf16", "fp32"]'
"$BIN/scalebench" results --experiment train-on-host --coordinator "$URL" >"$WORK/table.txt"
grep -q "the train workload needs GPUs; no agent has any" "$WORK/table.txt" || fail "table: $(cat "$WORK/table.txt")"
curl -sf "$URL/metrics" >"$WORK/metrics.txt"
grep -q '^scalebench_runs_finished_total{status="skipped"} 2$' "$WORK/metrics.txt" || fail "skipped runs counter"
grep -q '^scalebench_runs_finished_total{status="failed"} 0$' "$WORK/metrics.txt" || fail "failed runs counter"

# Standalone: the local cluster has no GPU either.
out=$("$BIN/scalebench" study "$WORK/train.yaml" --db "$WORK/s.db" 2>&1) || fail "study exited $?: $out"
grep -q "the train workload needs GPUs; no agent has any" <<<"$out" || fail "study does not say why: $out"
"$BIN/scalebench" results --db "$WORK/s.db" --format json >"$WORK/s.jsonl"
json_check "$WORK/s.jsonl" 'len(records) == 2 and all(r["status"] == "skipped" for r in records)'
echo "gpu_workload_on_host: ok"
