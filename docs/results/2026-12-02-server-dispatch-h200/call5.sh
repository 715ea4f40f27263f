#!/bin/bash
# Call 5 on the machine of call 4, right after it: one Server run at a fixed 17,000 queries/s with
# no timeout (when_idle, 2 streams), as call 4's runs, now that the machine had built the engine's
# kernels once. (Run as one command line; $OUT set, the bundle unpacked.)
export CUDA_VISIBLE_DEVICES=0
start=$SECONDS
timeout 105 .gpu-bundle/env.sh mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
  -p model=resnet50 -p scenario=server -p max_batch=256 -p precision=fp16 -p conv_api=fused -p streams=2 \
  -p dispatch=when_idle -p batch_timeout_ms=0 -p target_qps=17000 -p min_duration_s=3 > $OUT/call5-fixed-0ms.jsonl 2>&1
echo "rc=$? in $((SECONDS - start)) s"
python3 scripts/record-summary.py --details queries_per_second,latency_ms.p99,mean_batch,batches,engine.build_s \
  $OUT/call5-fixed-0ms.jsonl | tail -1 | cut -c1-700
