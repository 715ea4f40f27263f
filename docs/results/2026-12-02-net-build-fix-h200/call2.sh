#!/bin/bash
# Call 2 on an H200 (Fashion-MNIST unpacked by call0.sh a, then b, on that machine): ResNet-50 fp16
# Offline at batch 256 on 3 streams, ours (fused, layer by layer, fused again) and the
# torch.compile peer (reduce-overhead; max-autotune with cuDNN's convolutions) one after another in
# this one call; then the Server search on the fused engine.
. "$(dirname "$0")/../2026-12-02-fused-fp16-h200/lib.sh"
OFFLINE_DETAILS=check.spread,check.max_error_across_streams_x_spread
gpu_facts
offline fp16-fused 45 -p precision=fp16 -p conv_api=fused
peer fp16 reduce-overhead 100
offline fp16 40 -p precision=fp16
peer fp16 max-autotune 240 --conv-backends ATEN
offline fp16-fused-2 45 -p precision=fp16 -p conv_api=fused
# server NAME SECONDS PARAM...: the highest Poisson rate whose p99 latency is within 15 ms.
server() {
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  timeout "$limit" $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
    -p model=resnet50 -p scenario=server -p target_qps=0 -p min_duration_s=4 -p search_trials=8 \
    -p search_tolerance=0.03 "$@" > "$RAW/server-$name.jsonl" 2>&1
  echo "server $name ($*) rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details \
    verdict,reasons,queries_per_second,latency_ms.p99,mean_batch,engine.build_s,engine.device_bytes,search.trials \
    "$RAW/server-$name.jsonl" | tail -1 | cut -c1-1600
}
server fp16-fused-256-3-4ms 150 -p precision=fp16 -p conv_api=fused -p max_batch=256 -p streams=3 -p batch_timeout_ms=4
pack 2
