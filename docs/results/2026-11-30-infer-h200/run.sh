#!/bin/bash
# The infer workload on one H200, one device call: its GPU tests, then ResNet-50 fp16 under each
# MLPerf scenario with short runs (so every verdict is INVALID for the duration; the figures are
# what a short run measures). Run from the repository root with B = the bundle's env.sh (its bin/
# holding scalebench-unit-tests and scalebench-run) and $OUT the call's output folder:
#   B=<bundle>/env.sh bash docs/results/2026-11-30-infer-h200/run.sh > $OUT/console.txt 2>&1
# In order, each under its own timeout and within what is left of the call (deadline, default 400 s):
# 1. InferGpu.*: batched against one-by-one logits (tiny fp32 with a mixed-up control, resnet50
#    fp16), and every scenario run to its end on the engine;
# 2. offline, 10 s (full batches of 256 on 2 streams);
# 3. single_stream, 10 s;
# 4. multi_stream, 10 s;
# 5. server at 15,000 queries/s, 15 s (batches up to 128, 2 ms timeout, 2 streams);
# 6. server search (target_qps 0) of 5 trials of 4 s each.
# Records to $OUT/raw/NAME.jsonl, a summary line per run to stdout.
B=${B:-.gpu-bundle/env.sh}
deadline=${deadline:-400}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"

# within SECONDS COMMAND...: the command under `timeout`, never past the call's deadline.
within() {
  local want=$1 left=$((deadline - SECONDS))
  shift
  if ((left < 15)); then
    echo "skipped (${left} s left): $*"
    return 124
  fi
  timeout $((want < left ? want : left)) "$@"
}

# The records of NAME.jsonl, one line each: scenario, figure, verdict, percentiles, rates, reasons.
summary() {
  python3 - "$OUT/raw/$1.jsonl" <<'PY'
import json, sys

def check(c):
    return "not checked" if not c["checked"] else "passed" if c["passed"] else "FAILED (%s wrong)" % c["wrong"]

for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    d, p = r.get("details") or {}, r.get("point") or {}
    if "latency_ms" not in d:
        print("  %s: %s" % (r.get("status"), r.get("reason")))
        continue
    l = d["latency_ms"]
    print("  %s %s %s: %s %s %s | p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f ms | %.1f queries/s %.1f samples/s | %d queries in %.1f s, mean batch %.1f | check %s"
          % (p["model"], p["precision"], p["scenario"], d["verdict"], r["value"], r["unit"], l["p50"], l["p90"], l["p99"],
             l["p99_9"], d["queries_per_second"], d["samples_per_second"], d["queries"], d["duration_s"], d["mean_batch"],
             check(r["correctness"])))
    for why in d["reasons"]:
        print("    INVALID: " + why)
    for t in (d.get("search") or {}).get("trials", []):
        print("    search: %.1f queries/s %s, p99 %.3f ms" % (t["qps"], "within the bound" if t.get("within_bound", t.get("valid")) else "over the bound", t.get("p99_ms", 0)))
    print("    engine built in %.1f s, batch sizes %s" % (d["engine"]["build_s"], d["engine"]["batch_sizes"]))
PY
}

run() {  # NAME SECONDS PARAMS...
  local name=$1 want=$2 start=$SECONDS
  shift 2
  echo "== $name"
  within "$want" $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json "$@" \
    > "$OUT/raw/$name.jsonl" 2> "$OUT/raw/$name.err"
  echo "rc=$? in $((SECONDS - start)) s"
  summary "$name"
  tail -3 "$OUT/raw/$name.err"
}

echo "== GPU tests"; start=$SECONDS
tests=scalebench-unit-tests; [[ -x "$(dirname "$B")/bin/$tests" ]] || tests=train-unit-tests  # as earlier bundles
within 90 $B $tests --gtest_filter='InferGpu.*' > "$OUT/raw/gpu-tests.txt" 2>&1
echo "rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|^resnet50|^tiny|Failure|max error" "$OUT/raw/gpu-tests.txt" | head -20

R="-p model=resnet50 -p precision=fp16"
run offline 70 $R -p scenario=offline -p max_batch=256 -p streams=2 -p min_duration_s=10
run single_stream 50 $R -p scenario=single_stream -p min_duration_s=10
run multi_stream 50 $R -p scenario=multi_stream -p min_duration_s=10
run server 90 $R -p scenario=server -p target_qps=15000 -p max_batch=128 -p batch_timeout_ms=2 -p min_duration_s=15
run server_search 110 $R -p scenario=server -p target_qps=0 -p max_batch=128 -p min_duration_s=4 -p search_trials=5 \
  -p search_tolerance=0.1
echo "total $SECONDS s"
