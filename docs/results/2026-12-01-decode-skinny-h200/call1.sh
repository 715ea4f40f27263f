#!/bin/bash
# Call 1 on one H200 (programs at the commit the README names; Fashion-MNIST unpacked by the call
# before): the GPU regression study at the session's start; the decoder's GPU tests (the skinny
# linear layer, attention writing its own key, continuous batching, Llama, the engine from a
# checkpoint) and the training step's after GELU moved to the shared kernel header; greedy decoding
# timed with its per-kernel-group profile; the PyTorch peer at the same shapes, one after the other;
# then `infer` generating text (Offline, and a Server search) with GPT-2 124M. Run from the
# repository root with B = the bundle's env.sh and $OUT set; raw output in $OUT/call1-raw.tar.gz.
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
CUDA_VISIBLE_DEVICES=0 timeout 150 $B decode-gpu-tests \
  --gtest_filter='SkinnyLinearGpu.*:GptDecoderGpu.*:BothFamilies/GptDecoderFamilyGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptFp8*' \
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
  CUDA_VISIBLE_DEVICES=0 timeout 120 python3 examples/pytorch/gpt_decode.py --model $1 --batch $2 --prompt 128 --new 256 \
    >> "$RAW/peer.jsonl" 2>> "$RAW/peer.err"
  echo "peer $1 batch $2 rc=$? in $((SECONDS - start)) s"
done
python3 -c "
import json
for l in open('$RAW/peer.jsonl'):
    r = json.loads(l); print(r['model'], 'batch', r['batch'], 'tokens/s', round(r['tokens_per_s']['median']), 'step ms', round(r['step_ms']['median'], 3), 'cache', r.get('cache_positions'))
"
tail -3 "$RAW/peer.err"
echo "== infer: text generation, GPT-2 124M"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
  -p model=gpt2-124m -p max_batch=64 -p min_duration_s=20 > "$RAW/infer-offline.jsonl" 2> "$RAW/infer-offline.err"
echo "offline rc=$? in $((SECONDS - start)) s"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
  -p model=gpt2-124m -p max_batch=64 -p scenario=server -p target_qps=0 -p min_duration_s=10 -p search_trials=5 \
  > "$RAW/infer-server.jsonl" 2> "$RAW/infer-server.err"
echo "server search rc=$? in $((SECONDS - start)) s"
for f in offline server; do
  python3 - "$RAW/infer-$f.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    i = line.find("{")
    if i < 0: continue
    try: r = json.loads(line[i:])
    except ValueError: continue
    if r.get("metric") != "tokens_per_second": continue
    d = r.get("details", {})
    print(r["point"].get("scenario"), r.get("status"), r.get("reason", ""), "tokens/s %.0f" % d.get("tokens_per_second", 0),
          "queries/s %.2f" % d.get("queries_per_second", 0), "TTFT", d.get("ttft_ms"), "TPOT", d.get("tpot_ms"),
          d.get("verdict"), d.get("reasons"), "mean batch", d.get("mean_decode_batch"))
    print("  check:", d.get("check"))
    for t in (d.get("search") or {}).get("trials", []): print("  search:", t)
PY
  tail -3 "$RAW/infer-$f.err"
done
tar -C "$OUT" -czf "$OUT/call1-raw.tar.gz" raw && rm -rf "$OUT/raw"
