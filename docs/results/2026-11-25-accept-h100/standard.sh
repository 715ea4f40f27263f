#!/bin/bash
# Call 1 of 2 on one GPU: `scalebench accept --level standard` again and again on a clean GPU, as
# many times as fit in about 8 minutes; each run's verdicts, exit code and time. Run from the
# repository root with B pointing at the bundle's env.sh and OUT at a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
end=$((SECONDS + ${BUDGET_S:-480}))
i=0
while :; do
  i=$((i + 1))
  t0=$SECONDS
  timeout 300 $B scalebench accept --level standard --db "$OUT/standard-$i.db" --json "$OUT/standard-$i.json" \
    >"$OUT/standard-$i.log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
  echo "== standard run $i: exit $rc in ${took} s"
  grep -E "FAIL|WARN|fail|warn|verdict|node " "$OUT/standard-$i.log" | head -20
  [[ $((SECONDS + took)) -lt $end ]] || break
done
echo "== last run's whole output"; cat "$OUT/standard-$i.log"
