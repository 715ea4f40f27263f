#!/bin/bash
# Call 2 on one H200 (a fresh machine; `call0.sh a` unpacked Fashion-MNIST's training images, this
# call the rest, carried beside a bundle of the four programs it runs): the GPU tests of
# this session's changes (the quantized net, int8 and E4M3; the infer engine's nets sharing their
# stream's largest net's outputs; split attention's share and combine); decode at batch 1 and 64
# with this session's attention against the same program built with 66c78b9's (the even share),
# alternated; time to accuracy on Fashion-MNIST with each trained net quantized to int8 and E4M3;
# ResNet-50 fp16 Offline and the Server search at two batching set-ups. Run from the repository
# root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw" /usr/share/datasets/fashion-mnist && cp .gpu-data/b/* /usr/share/datasets/fashion-mnist/
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
timeout 150 $B session-gpu-tests \
  --gtest_filter='QuantNetGpu.*:InferGpu.*:DecodeAttentionGpu.*:DecodeAttention.*:GptDecoderGpu.*:BothFamilies/GptDecoderFamilyGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|spread|int8|fp8" "$RAW/unit.txt" | head -60
echo "== decode: this session's attention (new) against 66c78b9's (old), alternated"; start=$SECONDS
for shape in "gpt2-124m 1" "gpt2-1558m 1" "gpt2-124m 64"; do
  set -- $shape
  for round in 1 2; do
    for prog in new old; do
      bin=scalebench-gpt-check; [ $prog = old ] && bin=scalebench-gpt-check-66c78b9
      timeout 60 $B $bin decode $1 $2 128 256 5 2>> "$RAW/decode.err" | sed "s/^{/{\"program\":\"$prog\",/" >> "$RAW/decode.jsonl"
    done
  done
done
echo "decode in $((SECONDS - start)) s"
python3 -c "
import json
for l in open('$RAW/decode.jsonl'):
    r = json.loads(l); print(r['program'], r['decode'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'min', round(r['tokens_per_s']['min']), 'max', round(r['tokens_per_s']['max']), 'step ms', round(r['step_ms']['median'], 4))
"
tail -3 "$RAW/decode.err"
echo "== time to accuracy, then each trained net quantized (int8, E4M3)"; start=$SECONDS
timeout 240 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run train --format json -p data=fashion-mnist \
  -p model=fmnist-resnet -p precision=bf16 -p batch=512 -p weight_decay=0.0005 -p target_accuracy=0.937 -p max_epochs=10 \
  -p seeds=3 -p quantize=int8,fp8e4m3 > "$RAW/tta-quantized.jsonl" 2> "$RAW/tta-quantized.err"
echo "tta rc=$? in $((SECONDS - start)) s"
python3 scripts/record-summary.py --details final_accuracy,trained_accuracy,lost_points,reached "$RAW/tta-quantized.jsonl"
tail -5 "$RAW/tta-quantized.err"
echo "== ResNet-50 fp16: Offline, then Server searches"
R="-p model=resnet50 -p precision=fp16"
run_infer() {  # name, parameters...
  local name=$1; shift; local t0=$SECONDS
  timeout 150 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json $R "$@" \
    > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - t0)) s"
  python3 scripts/record-summary.py --details verdict,reasons,samples_per_second,queries_per_second,latency_ms.p99,mean_batch,search.trials "$RAW/$name.jsonl"
  tail -2 "$RAW/$name.err"
}
run_infer offline -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10
run_infer server-256-3-2ms -p max_batch=256 -p streams=3 -p batch_timeout_ms=2 -p scenario=server -p target_qps=0 \
  -p min_duration_s=4 -p search_trials=8 -p search_tolerance=0.03
run_infer server-512-4-4ms -p max_batch=512 -p streams=4 -p batch_timeout_ms=4 -p scenario=server -p target_qps=0 \
  -p min_duration_s=4 -p search_trials=8 -p search_tolerance=0.03
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
