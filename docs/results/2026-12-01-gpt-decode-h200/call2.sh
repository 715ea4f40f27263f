#!/bin/bash
# Call 2 on one H200 (programs at the commit the README names; Fashion-MNIST unpacked by the call
# before): the GPU regression study at the session's end, the GPU tests of the gpt workload
# (the decoder's, and the training step's after its GEMM runner moved to bf16_gemm.*), then
# greedy decoding with the KV cache timed (scalebench-gpt-check decode) and the PyTorch peer
# (examples/pytorch/gpt_decode.py, torch.compile reduce-overhead) at the same shape, one after
# the other. Run from the repository root with B = the bundle's env.sh and $OUT set; the raw
# output lands in $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED" "$RAW/gr.txt" | cut -c1-120 | tail -20
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 120 $B decode-gpu-tests \
  --gtest_filter='GptDecoderGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptFp8*:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error" "$RAW/unit.txt" | head -40
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
"
tail -3 "$RAW/decode.err"
echo "== decode (PyTorch peer)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 110 python3 examples/pytorch/gpt_decode.py --model gpt2-124m --batch 1 --prompt 128 --new 256 \
  > "$RAW/peer.jsonl" 2> "$RAW/peer.err"
echo "peer rc=$? in $((SECONDS - start)) s"
cat "$RAW/peer.jsonl"; tail -3 "$RAW/peer.err"
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
