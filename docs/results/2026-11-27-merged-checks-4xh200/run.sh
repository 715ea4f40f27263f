#!/bin/bash
# Checks of the merged main on a 4-GPU machine: every GPU unit test (sharded over the GPUs), the
# GPT text run (the fortunes package's text files copied to .gpt-dev/fortunes-corpus), the quick GPU
# study and its report, and the agent's metrics during a GPU run.
B=${B:-.gpu-bundle/env.sh}   # run from the repository root with the bundle unpacked, OUT = a folder for the logs
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv,noheader
echo "== GPU unit tests, 4 shards"
for i in 0 1 2 3; do
  CUDA_VISIBLE_DEVICES=$i GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 180 $B scalebench-unit-tests \
    --gtest_filter='*Gpu*:GptText*' > $OUT/unit-$i.log 2>&1 &
done
wait
grep -hE "^\[  (PASSED|FAILED|SKIPPED) |tests ran" $OUT/unit-*.log | sort | uniq -c | sort -rn | head -40
echo "== in parallel: text run (GPU 0), quick-gpu study (GPU 1), metrics (GPU 2)"
( CUDA_VISIBLE_DEVICES=0 timeout 120 $B mpirun -np 1 --allow-run-as-root scalebench-run gpt -p data=.gpt-dev/fortunes-corpus \
    -p seq=512 -p micro_batch=16 -p train_steps=400 -p lr=6e-4 -p lr_warmup=50 -p eval_every=50 -p eval_batches=8 \
    > $OUT/gpt-text.log 2>&1; echo "gpt text rc=$?" >> $OUT/gpt-text.log ) &
( export CUDA_VISIBLE_DEVICES=1; t0=$SECONDS; timeout 150 $B scalebench study examples/quick-gpu.yaml --db $OUT/quick.db > $OUT/quick.log 2>&1;
  echo "quick-gpu study rc=$? in $((SECONDS-t0)) s" >> $OUT/quick.log;
  timeout 60 $B scalebench report --db $OUT/quick.db --out $OUT/quick-report >> $OUT/quick.log 2>&1; echo "report rc=$?" >> $OUT/quick.log ) &
( export CUDA_VISIBLE_DEVICES=2; M=$OUT/metrics; mkdir -p $M/jobmap
  $B scalebench-coordinator --port 18470 --db $M/sb.db > $M/coord.log 2>&1 & cpid=$!
  sleep 1; $B scalebench-agent --coordinator http://127.0.0.1:18470 --metrics-port 19470 --job-mapping-dir $M/jobmap > $M/agent.log 2>&1 & apid=$!
  sleep 2
  printf 'name: bind-check\nworkload: gemm\nparams: {shapes: square, sizes: 8192, time_cap: 3}\nplacement: {gpus_per_node: [1]}\nrepetitions: 20\n' > $M/g.yaml
  $B scalebench submit $M/g.yaml --coordinator http://127.0.0.1:18470 > $M/submit.log 2>&1
  for k in $(seq 1 20); do sleep 1; ls $M/jobmap | grep -q . && break; done
  sleep 2; curl -s 127.0.0.1:19470/metrics | grep -E '^scalebench_(run_info|gpu_power_watts|build_info)' > $M/during.txt
  for f in $M/jobmap/*; do echo "$f: $(cat $f)"; done > $M/jobmap-during.txt 2>&1
  timeout 90 $B scalebench wait 1 --coordinator http://127.0.0.1:18470 > $M/wait.log 2>&1; echo "wait rc=$?" >> $M/wait.log
  ls $M/jobmap > $M/jobmap-after.txt
  $B scalebench results --coordinator http://127.0.0.1:18470 --format json > $M/results.json 2>&1
  kill $apid $cpid; wait $apid $cpid 2>/dev/null ) &
wait
grep -E "^# text|gpt text rc|wrong|loss" $OUT/gpt-text.log | tail -14
grep -E "rc=|runs|ok|failed" $OUT/quick.log | tail -8
cat $OUT/metrics/during.txt | head -8; cat $OUT/metrics/jobmap-during.txt; echo "after: $(cat $OUT/metrics/jobmap-after.txt | wc -l) files"; tail -2 $OUT/metrics/wait.log
python3 - $OUT/metrics/results.json <<'PY'
import json, sys
text = open(sys.argv[1]).read()
try: rows = json.loads(text)
except ValueError: rows = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
if isinstance(rows, dict): rows = rows.get("records", [rows])
for r in rows[:1]:
    env = r.get("environment", {})
    print("binding:", env.get("binding"), "env:", {k: v for k, v in (env.get("env") or {}).items() if "BINDING" in k})
PY
