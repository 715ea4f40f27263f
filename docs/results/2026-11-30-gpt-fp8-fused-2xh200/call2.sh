#!/bin/bash
# Call 2 on 2 x H200: the FP8 casts made once and GELU in the FP8 GEMMs' epilogues, against the
# programs before them, in one call.
#   GPU 1, from the start: the PyTorch FP8 peer (examples/pytorch/gpt_train.py --precision fp8
#     --compile, GPT-2 1.5B batch 8), then the bf16 one, each timed once it has compiled.
#   GPU 0: the GPU tests of the FP8 path and of the bf16 step it shares (fp8-gpu-tests: the test
#     sources gpt_fp8_gpu_test.cpp, gpt_gpu_test.cpp, gpt_recompute_gpu_test.cpp and gpt_adamw_gpu_test.cpp linked with gtest_main against this commit's libscalebench_gpt.a), then
#     tokens/s, each shape with the programs before the change (scalebench-run-old, ea7c766) and
#     after it, fp8 and bf16: GPT-2 1.5B batch 8, Llama 3 8B-shaped layers (4 blocks, seq 4096,
#     batch 2), GPT-2 124M batch 16, and shapes not tuned for (GPT-2 774M batch 12, Llama
#     8B-shaped 2 blocks seq 2048 batch 4); GPT-2 1.5B twice more, old and new interleaved. Then
#     check 1 again (300 steps of GPT-2 124M-shaped on the fortunes, bf16 and fp8, same seed; the
#     bundle carries a copy of /usr/share/games/fortunes, Debian's package, as .gpu-bundle/fortunes).
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
PEER=examples/pytorch/gpt_train.py
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$RAW/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())" | tee "$RAW/torch.txt"

peers() {  # on GPU 1, one after the other
  for p in fp8 bf16; do
    local start=$SECONDS
    CUDA_VISIBLE_DEVICES=1 timeout $((560 - SECONDS)) python3 "$PEER" --model gpt2-1558m --batch 8 --seq 1024 --compile \
      --precision $p --warmup 3 --steps 5 > "$RAW/peer-$p-1.5b.json" 2> "$RAW/peer-$p-1.5b.err"
    echo "peer $p 1.5B rc=$? in $((SECONDS - start)) s (at $SECONDS s)" >> "$RAW/peer-status.txt"
  done
}
peers &
peer_pid=$!

echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptAdamwGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|relative errors|Failure|Expected|Which is" "$RAW/unit.txt" | head -30

speed() {  # program tag params...
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 "$1" gpt "${@:3}" --emit records > "$RAW/speed-$2.jsonl" 2>> "$RAW/errs.txt"
  echo "$2 rc=$? in $((SECONDS - start)) s"
}
ab() {  # tag params...: old fp8, new fp8, new bf16
  speed scalebench-run-old "$1-fp8-old" "${@:2}" -p precision=fp8
  speed scalebench-run "$1-fp8-new" "${@:2}" -p precision=fp8
  speed scalebench-run "$1-bf16" "${@:2}" -p precision=bf16
}
echo "== tokens/s"
ab gpt2-1.5b-b8 -p model=gpt2-1558m -p micro_batch=8
ab llama8b-x4-b2-s4096 -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2
ab gpt2-124m-b16 -p model=gpt2-124m -p micro_batch=16
ab gpt2-774m-b12 -p model=gpt2-774m -p micro_batch=12
ab llama8b-x2-b4-s2048 -p model=llama3-8b -p layers=2 -p seq=2048 -p micro_batch=4
for again in 2 3; do
  speed scalebench-run-old "gpt2-1.5b-b8-fp8-old-$again" -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
  speed scalebench-run "gpt2-1.5b-b8-fp8-new-$again" -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
done
for f in "$RAW"/speed-*.jsonl; do
  echo "$(basename "$f" .jsonl): $(python3 scripts/record-summary.py --details step_ms,forward_ms,backward_ms,optimizer_ms,model_bytes "$f" | grep tokens | cut -c1-330)"
done
tail -n 8 "$RAW/errs.txt"

echo "== check 1: 300 steps on the fortunes, GPT-2 124M-shaped, seq 512, batch 16, seed 1234"
for p in bf16 fp8; do
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-124m -p data=.gpu-bundle/fortunes \
    -p seq=512 -p micro_batch=16 -p train_steps=300 -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 \
    -p precision=$p --emit records > "$RAW/text-$p.jsonl" 2>> "$RAW/errs.txt"
  echo "text $p rc=$? in $((SECONDS - start)) s"
done
python3 docs/results/2026-11-29-gpt-fp8-h200/summarise.py "$RAW"/text-*.jsonl | cut -c1-400

echo "== waiting for the peers (at $SECONDS s)"
wait $peer_pid
cat "$RAW/peer-status.txt"
for p in fp8 bf16; do
  python3 -c "
import json,sys
try: r=json.load(open('$RAW/peer-$p-1.5b.json'))
except Exception as e: print('peer $p: no record', e); sys.exit()
print('peer $p', {k: r.get(k) for k in ('model','batch_per_gpu','precision','tokens_per_s_per_gpu','tokens_per_s_max','warm_s','peak_mem_gib','loss','compiled_graphs','sdpa')})"
  tail -n 2 "$RAW/peer-$p-1.5b.err" | cut -c1-300
done
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
