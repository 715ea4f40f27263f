#!/bin/bash
# `scalebench accept --level standard` RUNS times in a row on a clean GPU: each run's exit code,
# time, and its failed or warned checks. Run from the repository root with B = the bundle's env.sh,
# OUT = a folder for the logs, FIRST = the number of the first run (for runs split over calls).
B=${B:-.gpu-bundle/env.sh}
RUNS=${RUNS:-5}
FIRST=${FIRST:-1}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
for ((i = FIRST; i < FIRST + RUNS; i++)); do
  t0=$SECONDS
  timeout 300 $B scalebench accept --level standard --db "$OUT/standard-$i.db" --json "$OUT/standard-$i.json" \
    >"$OUT/standard-$i.log" 2>&1
  rc=$?
  echo "== standard run $i: exit $rc in $((SECONDS - t0)) s"
  python3 - "$OUT/standard-$i.json" <<'PY'
import collections, json, sys
try:
    v = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"   no verdicts: {e}")
n = collections.Counter(x["outcome"] for x in v["verdicts"])
print("   checks:", dict(n))
for x in v["verdicts"]:
    if x["outcome"] == "fail" or x["rule"].startswith("burn-clock"):
        print("  ", x["outcome"], x["check"], x["rule"], x.get("value"), x["band"].get("basis", ""))
PY
done
grep -h "node_health\|scontrol" "$OUT"/standard-*.log | sort | uniq -c | head -5
