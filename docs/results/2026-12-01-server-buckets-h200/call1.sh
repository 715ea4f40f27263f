#!/bin/bash
# Call 1 on one H200 (Fashion-MNIST unpacked by call 0): the GPU regression study at the session's
# start, with the new decode experiment; the GPU tests of the decoder's kernels that had not run on
# a GPU (split attention sharing a row's keys evenly, head widths 16-128, the skinny layer's
# epilogue order) and of infer; greedy decoding at the four shapes of 2026-12-01-decode-skinny-h200;
# ResNet-50 fp16 Offline, then the Server search with the new batch buckets and the trial give-up,
# at two batching set-ups; then the torch.compile peer at batch 256. Run from the repository root
# with B = the bundle's env.sh and $OUT set; raw output in $OUT/call1-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
rc=$?
echo "gpu-regression rc=$rc in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
[ "$rc" = 0 ] && cp "$RAW/gr/records.jsonl.gz" "$OUT/accepted-records.jsonl.gz"
echo "== GPU tests"; start=$SECONDS
timeout 150 $B decode-gpu-tests \
  --gtest_filter='DecodeAttentionGpu.*:SkinnyLinearGpu.*:GptDecoderGpu.*:BothFamilies/GptDecoderFamilyGpu.*:InferGpu.*:CudnnQuant*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error" "$RAW/unit.txt" | head -60
echo "== decode (ours)"; start=$SECONDS
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1" "gpt2-1558m 64"; do
  set -- $shape
  timeout 60 $B scalebench-gpt-check decode $1 $2 128 256 5 >> "$RAW/decode.jsonl" 2>> "$RAW/decode.err"
  echo "$1 batch $2 rc=$?"
done
echo "decode in $((SECONDS - start)) s"
python3 -c "
import json
for l in open('$RAW/decode.jsonl'):
    r = json.loads(l); print(r['decode'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'min', round(r['tokens_per_s']['min']), 'max', round(r['tokens_per_s']['max']), 'step ms', round(r['step_ms']['median'], 3))
"
tail -3 "$RAW/decode.err"
echo "== ResNet-50 fp16: Offline, then Server searches"
R="-p model=resnet50 -p precision=fp16"
run_infer() {  # name, parameters...
  local name=$1; shift; local t0=$SECONDS
  timeout 120 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json $R "$@" \
    > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - t0)) s"
  python3 scripts/record-summary.py --details verdict,reasons,samples_per_second,queries_per_second,latency_ms.p99,mean_batch,check,search.trials "$RAW/$name.jsonl"
  tail -2 "$RAW/$name.err"
}
run_infer offline -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10
run_infer server-256-3-2ms -p max_batch=256 -p streams=3 -p batch_timeout_ms=2 -p scenario=server -p target_qps=0 \
  -p min_duration_s=4 -p search_trials=8 -p search_tolerance=0.03
run_infer server-512-4-4ms -p max_batch=512 -p streams=4 -p batch_timeout_ms=4 -p scenario=server -p target_qps=0 \
  -p min_duration_s=4 -p search_trials=8 -p search_tolerance=0.03
echo "== torch.compile peer, batch 256"; start=$SECONDS
timeout 240 python3 examples/pytorch/resnet50_infer.py --precision fp16 --batches 256 > "$RAW/peer.jsonl" 2> "$RAW/peer.err"
echo "peer rc=$? in $((SECONDS - start)) s"
cat "$RAW/peer.jsonl"; tail -3 "$RAW/peer.err"
tar -C "$OUT" -czf "$OUT/call1-raw.tar.gz" raw && rm -rf "$OUT/raw"
