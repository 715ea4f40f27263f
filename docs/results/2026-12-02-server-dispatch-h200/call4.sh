#!/bin/bash
# Call 4 on a fresh H200: why call 2's Server search with batch_timeout_ms 0 (when_idle, 2 streams)
# did not end within 90 s: one run at a fixed 17,000 queries/s with no timeout and one with 1 ms,
# each with its threads' states (utime, stime, wchan) if still running at 55 s.
tar -xJf .gpu-carry-b/bundle.tar.xz
export CUDA_VISIBLE_DEVICES=0
B=.gpu-bundle/env.sh
run() { local name=$1; shift; start=$SECONDS
  timeout 70 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 -p scenario=server -p max_batch=256 -p precision=fp16 \
    -p conv_api=fused -p streams=2 -p dispatch=when_idle "$@" > $OUT/$name.jsonl 2>&1 &
  local pid=$!
  for i in $(seq 55); do kill -0 $pid 2>/dev/null && sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    echo "$name still running at 55 s:"; for p in $(pgrep -f "scalebench-run infer"); do
      for t in /proc/$p/task/*; do echo "$p $(cat $t/comm) $(awk '{print $3, $14, $15}' $t/stat) $(cat $t/wchan 2>/dev/null)"; done; done | head -40
  fi
  wait $pid; echo "$name rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details queries_per_second,latency_ms.p99,mean_batch,batches,engine.build_s $OUT/$name.jsonl | tail -1 | cut -c1-600
}
run fixed-0ms -p batch_timeout_ms=0 -p target_qps=17000 -p min_duration_s=3
run fixed-1ms -p batch_timeout_ms=1 -p target_qps=17000 -p min_duration_s=3
