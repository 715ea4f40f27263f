#!/bin/bash
# Call 3 on one H200 (programs at the commit the README names): the decoder's GPU tests after its
# attention and greedy kernels were rewritten (a warp per key, four keys in flight; 1024 threads
# and 8-byte loads for the greedy choice), then the same decode timings as call 2 with a kernel
# profile of one step each, and the PyTorch peer at batch 1 again. Run from the repository root
# with B = the bundle's env.sh and $OUT set; the raw output lands in $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 60 $B decode-gpu-tests --gtest_filter='GptDecoderGpu.*:GptGpu.GraphedStepsTrainAsEagerStepsDo' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error" "$RAW/unit.txt" | head -40
echo "== decode (ours)"; start=$SECONDS
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1" "gpt2-1558m 64"; do
  set -- $shape
  CUDA_VISIBLE_DEVICES=0 timeout 45 $B scalebench-gpt-check decode $1 $2 128 256 3 >> "$RAW/decode.jsonl" 2>> "$RAW/decode.err"
  echo "$1 batch $2 rc=$?"
done
echo "decode in $((SECONDS - start)) s"
python3 -c "
import json
for l in open('$RAW/decode.jsonl'):
    r = json.loads(l); print(r['decode'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'prefill ms', round(r['prefill_ms']['median'], 2))
    print('  profile ms', {k: round(v, 3) for k, v in sorted(r['profile_ms'].items(), key=lambda kv: -kv[1])})
"
tail -3 "$RAW/decode.err"
echo "== decode (PyTorch peer)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 60 python3 examples/pytorch/gpt_decode.py --model gpt2-124m --batch 1 --prompt 128 --new 256 \
  > "$RAW/peer.jsonl" 2> "$RAW/peer.err"
echo "peer rc=$? in $((SECONDS - start)) s"
cat "$RAW/peer.jsonl"; tail -3 "$RAW/peer.err"
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
