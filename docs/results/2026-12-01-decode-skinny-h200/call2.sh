#!/bin/bash
# Call 2 on one H200 (programs at the commit the README names): the decoder's GPU tests (attention
# with its keys split over several blocks, the skinny linear layer, the decoder's own), greedy
# decoding timed with its profile (attention split, cuBLASLt's candidates timed for a decode
# step's GEMMs), and the PyTorch peer at the same shapes, one after the other. Run from the
# repository root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B decode-gpu-tests \
  --gtest_filter='DecodeAttentionGpu.*:SkinnyLinearGpu.*:GptDecoderGpu.*:BothFamilies/GptDecoderFamilyGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|sample" "$RAW/unit.txt" | head -60
echo "== decode (ours)"; start=$SECONDS
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1" "gpt2-1558m 64"; do
  set -- $shape
  CUDA_VISIBLE_DEVICES=0 timeout 60 $B scalebench-gpt-check decode $1 $2 128 256 5 >> "$RAW/decode.jsonl" 2>> "$RAW/decode.err"
  echo "$1 batch $2 rc=$?"
done
echo "decode in $((SECONDS - start)) s"
python3 -c "
import json
for l in open('$RAW/decode.jsonl'):
    r = json.loads(l); print(r['decode'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'prefill ms', round(r['prefill_ms']['median'], 2))
    print('  profile ms:', {k: round(v, 4) for k, v in sorted(r['profile_ms'].items(), key=lambda kv: -kv[1])})
"
tail -3 "$RAW/decode.err"
echo "== decode (PyTorch peer)"
for shape in "gpt2-124m 1" "gpt2-124m 64" "gpt2-1558m 1"; do
  set -- $shape; start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 240 python3 examples/pytorch/gpt_decode.py --model $1 --batch $2 --prompt 128 --new 256 \
    >> "$RAW/peer.jsonl" 2>> "$RAW/peer.err"
  echo "peer $1 batch $2 rc=$? in $((SECONDS - start)) s"
done
python3 -c "
import json
for l in open('$RAW/peer.jsonl'):
    r = json.loads(l); print(r['model'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'cache', r.get('cache_positions'))
"
tail -3 "$RAW/peer.err"
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
