#!/bin/bash
# Call 3 on 2 x H200: which of the FP8 epilogue choices is fastest, each program in turn on the
# same GPU, and the PyTorch peers again in the same call.
#   scalebench-run-old        ea7c766: every cast per GEMM, GELU and GELU' as kernels
#   scalebench-run-7c5f5d6    casts kept; GELU in the up projection's epilogue, GELU' in DGELU's
#   scalebench-run            c3b73de: casts kept; GELU in the epilogue, GELU' a kernel
#   scalebench-run-gelu-apart c3b73de with GELU a kernel after the GEMM too (one line of
#                             Fp8Linear::forward changed for this comparison, not committed)
#   GPU 1, from the start: the PyTorch peers (examples/pytorch/gpt_train.py --compile): FP8 and
#     bf16 at GPT-2 1.5B batch 8, then FP8 at GPT-2 774M batch 12, each timed once compiled.
#   GPU 0: the GPU tests (fp8-gpu-tests: gpt_fp8_gpu_test.cpp, gpt_gpu_test.cpp,
#     gpt_recompute_gpu_test.cpp, gpt_adamw_gpu_test.cpp linked with gtest_main against
#     c3b73de's libraries), then tokens/s: GPT-2 1.5B batch 8 fp8 with the four programs, two
#     rounds; 774M batch 12 and 124M batch 16 fp8 with the four; bf16 with the old program and
#     the new (AdamW four-wide) at 1.5B, 774M and 124M; Llama 8B-shaped layers (4 blocks, seq
#     4096, batch 2) fp8 and bf16 with the new.
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
PEER=examples/pytorch/gpt_train.py
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$RAW/gpu.txt"

peer() {  # tag model batch precision
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=1 timeout $((570 - SECONDS)) python3 "$PEER" --model "$2" --batch "$3" --seq 1024 --compile \
    --precision "$4" --warmup 3 --steps 5 > "$RAW/peer-$1.json" 2> "$RAW/peer-$1.err"
  echo "peer $1 rc=$? in $((SECONDS - start)) s (at $SECONDS s)" >> "$RAW/peer-status.txt"
}
(peer fp8-1.5b gpt2-1558m 8 fp8; peer bf16-1.5b gpt2-1558m 8 bf16; peer fp8-774m gpt2-774m 12 fp8) &
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
four() {  # tag params...: the four programs in turn
  speed scalebench-run-old "$1-old" "${@:2}"
  speed scalebench-run-7c5f5d6 "$1-dgelu" "${@:2}"
  speed scalebench-run "$1-new" "${@:2}"
  speed scalebench-run-gelu-apart "$1-gelu-apart" "${@:2}"
}
echo "== tokens/s"
four gpt2-1.5b-b8-fp8-r1 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
four gpt2-1.5b-b8-fp8-r2 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
four gpt2-774m-b12-fp8 -p model=gpt2-774m -p micro_batch=12 -p precision=fp8
four gpt2-124m-b16-fp8 -p model=gpt2-124m -p micro_batch=16 -p precision=fp8
for m in "gpt2-1.5b-b8 -p model=gpt2-1558m -p micro_batch=8" "gpt2-774m-b12 -p model=gpt2-774m -p micro_batch=12" \
         "gpt2-124m-b16 -p model=gpt2-124m -p micro_batch=16"; do
  set -- $m
  speed scalebench-run-old "$1-bf16-old" "${@:2}" -p precision=bf16
  speed scalebench-run "$1-bf16-new" "${@:2}" -p precision=bf16
done
speed scalebench-run llama8b-x4-b2-s4096-fp8-new -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=fp8
speed scalebench-run llama8b-x4-b2-s4096-bf16-new -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=bf16
for f in "$RAW"/speed-*.jsonl; do
  python3 - "$f" <<'PY'
import json, sys
f = sys.argv[1]
for line in open(f):
    i = line.find("{")
    if i < 0:
        continue
    try:
        r = json.loads(line[i:])
    except ValueError:
        continue
    if r.get("metric") != "throughput":
        continue
    d, st = r["details"], r["stats"]
    print(f"{f.split('speed-')[-1][:-6]:34s} {st['median']:>9.0f} tokens/s (cv {st.get('cv', 0):.4f}, n {st.get('n')}) "
          f"step {d['step_ms']:.2f} fwd {d['forward_ms']:.2f} bwd {d['backward_ms']:.2f} opt {d['optimizer_ms']:.2f} ms, "
          f"{d['model_bytes'] / 2**30:.2f} GiB, correct {r['correctness'].get('passed')}")
PY
done
tail -n 4 "$RAW/errs.txt"

echo "== waiting for the peers (at $SECONDS s)"
wait $peer_pid
cat "$RAW/peer-status.txt"
for t in fp8-1.5b bf16-1.5b fp8-774m; do
  python3 -c "
import json,sys
try: r=json.load(open('$RAW/peer-$t.json'))
except Exception as e: print('peer $t: no record', e); sys.exit()
print('peer $t', {k: r.get(k) for k in ('model','batch_per_gpu','precision','tokens_per_s_per_gpu','tokens_per_s_max','warm_s','peak_mem_gib','loss','compiled_graphs','sdpa')})"
done
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
