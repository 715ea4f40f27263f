#!/bin/bash
# call 6 (one H200): examples/gpt.yaml under `scalebench study` with the final code, and its report
# B: a bundle of this build with scalebench, scalebench-agent, scalebench-coordinator and scalebench-run
B=${B:-.gpu-bundle/env.sh}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== study examples/gpt.yaml"; timeout 200 $B scalebench study examples/gpt.yaml --db "$OUT/gpt.db" > $OUT/study.log 2>&1; echo "rc=$?"; tail -25 $OUT/study.log
echo "== report"; timeout 60 $B scalebench report --db "$OUT/gpt.db" --out "$OUT/report" > $OUT/report.log 2>&1; echo "rc=$?"; tail -3 $OUT/report.log; ls $OUT/report | head; grep -i -m3 "tokens" $OUT/report/*.md | cut -c1-300
rm -f $OUT/report/*.png; tar czf $OUT/report.tgz -C $OUT report && rm -rf $OUT/report
