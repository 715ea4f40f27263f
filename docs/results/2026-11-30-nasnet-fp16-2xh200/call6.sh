#!/bin/bash
# Call 6 on one GPU of a 2 x H200 machine: (1) infer's Offline and the Server search with call 4's
# best batching set-up (max_batch 256, 2 ms, 3 streams) in one call, so that Server can be put
# against Offline; (2) the quantized convolutions of ResNet-50's 56x56 layers, where call 4's
# heuristic engines ran int8 at a third of fp16, with every plan cuDNN offers timed (plans 32)
# against the default 4. Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
export CUDA_VISIBLE_DEVICES=0
R="-p model=resnet50 -p precision=fp16 -p max_batch=256 -p streams=3"
t0=$SECONDS
timeout 60 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json $R -p scenario=offline \
  -p min_duration_s=10 > "$OUT/raw/offline.jsonl" 2>&1
echo "offline rc=$? in $((SECONDS - t0)) s"
t0=$SECONDS
timeout 80 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json $R -p scenario=server \
  -p target_qps=0 -p batch_timeout_ms=2 -p min_duration_s=4 -p search_trials=6 -p search_tolerance=0.05 \
  > "$OUT/raw/server.jsonl" 2>&1
echo "server search rc=$? in $((SECONDS - t0)) s"
for f in offline server; do
  python3 scripts/record-summary.py --details verdict,samples_per_second,queries_per_second,latency_ms.p99,search.trials "$OUT/raw/$f.jsonl"
done
S=256x64x1x1@56x56,64x64x3x3@56x56:p1,64x256x1x1@56x56,64x64x1x1@56x56
for plans in 4 32; do
  t0=$SECONDS
  timeout 60 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run conv -p shapes=$S -p precision=fp16,int8,fp8e4m3 \
    -p pass=fwd -p plans=$plans > "$OUT/raw/conv-plans$plans.txt" 2>&1
  echo "conv plans $plans rc=$? in $((SECONDS - t0)) s"; grep -E "@56x56" "$OUT/raw/conv-plans$plans.txt" | cut -c1-200
done
tar -C "$OUT" -czf "$OUT/call6-raw.tar.gz" raw && rm -rf "$OUT/raw"
