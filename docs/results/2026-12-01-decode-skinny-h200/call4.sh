#!/bin/bash
# Call 4 on one H200, the same machine right after call 3 (programs as call 3's; Fashion-MNIST
# still there): GPT-2 1.5B at batch 64, ours then the PyTorch peer, and the GPU regression study
# again at the end. Run from the repository root with B = the bundle's env.sh and $OUT set; raw
# output in $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== decode (ours)"
CUDA_VISIBLE_DEVICES=0 timeout 60 $B scalebench-gpt-check decode gpt2-1558m 64 128 256 5 > "$RAW/decode.jsonl" 2> "$RAW/decode.err"
echo "rc=$?"
echo "== decode (PyTorch peer)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 examples/pytorch/gpt_decode.py --model gpt2-1558m --batch 64 --prompt 128 --new 256 \
  > "$RAW/peer.jsonl" 2> "$RAW/peer.err"
echo "peer rc=$? in $((SECONDS - start)) s"
python3 -c "
import json
for f in ('$RAW/decode.jsonl', '$RAW/peer.jsonl'):
    for l in open(f):
        r = json.loads(l); print(r.get('decode', r.get('model')), 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'min', round(r['tokens_per_s']['min']), 'max', round(r['tokens_per_s']['max']), 'step ms', round(r['step_ms']['median'], 3))
"
tail -3 "$RAW/peer.err"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED" "$RAW/gr.txt" | cut -c1-120 | tail -20
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
