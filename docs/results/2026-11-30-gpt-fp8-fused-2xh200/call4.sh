#!/bin/bash
# Call 4 on 2 x H200, the session's end: the GPU regression study on GPU 0 (Fashion-MNIST unpacked
# by the call before), then the GPU tests of the FP8 path with the Llama block's check on its
# loss curve (fp8-gpu-tests, as in call 3, from this commit), then a shape not tuned for against
# its peer: GPT-2 774M batch 12, ours fp8 and bf16 on GPU 0 while the PyTorch FP8 peer compiles
# and runs on GPU 1 (it started after the regression study, so as not to load the host under it).
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
PEER=examples/pytorch/gpt_train.py
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:" "$RAW/gr.txt" | cut -c1-120 | tail -20

(start=$SECONDS; CUDA_VISIBLE_DEVICES=1 timeout 330 python3 "$PEER" --model gpt2-774m --batch 12 --seq 1024 --compile \
   --precision fp8 --warmup 3 --steps 5 > "$RAW/peer-fp8-774m.json" 2> "$RAW/peer-fp8-774m.err"
 echo "peer fp8 774M rc=$? in $((SECONDS - start)) s" > "$RAW/peer-status.txt") &
peer_pid=$!

echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests --gtest_filter='GptFp8*:GptAdamwGpu.*' > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[       OK|^\[  FAILED|relative errors|llama|loss:|Failure" "$RAW/unit.txt" | head -20

echo "== GPT-2 774M batch 12"
for p in fp8 bf16 fp8; do
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-774m -p micro_batch=12 -p precision=$p \
    --emit records >> "$RAW/speed-774m.jsonl" 2>> "$RAW/errs.txt"
  echo "774m $p rc=$? in $((SECONDS - start)) s"
done
python3 scripts/record-summary.py --details step_ms,forward_ms,backward_ms,optimizer_ms "$RAW/speed-774m.jsonl" | grep tokens | cut -c1-300
wait $peer_pid
cat "$RAW/peer-status.txt"
python3 -c "
import json,sys
try: r=json.load(open('$RAW/peer-fp8-774m.json'))
except Exception as e: print('peer: no record', e); sys.exit()
print('peer fp8 774m', {k: r.get(k) for k in ('model','batch_per_gpu','precision','tokens_per_s_per_gpu','tokens_per_s_max','warm_s','peak_mem_gib','compiled_graphs','sdpa')})"
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
