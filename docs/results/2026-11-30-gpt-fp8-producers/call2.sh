#!/bin/bash
# Call 2 on one H200: the FP8 casts moved into the kernels that make their tensors, against the
# code before (each program in turn on the same GPU).
#   scalebench-run-2750cb5  the code at 2750cb5: GELU's output written in bf16 by the up
#                           projection's GEMM and cast by a kernel; GELU' a kernel on the bf16
#                           input gradient, then a cast of it
#   scalebench-run          this change: the up projection's GEMM writes GELU's output in FP8 (at
#                           the down projection's x scale, with its amax), transposed from those
#                           bytes for the weight gradient; GELU' applied in the pass that casts
#                           the up projection's output gradient
# First the GPU tests (fp8-gpu-tests: gpt_fp8_gpu_test.cpp with the two new tests,
# gpt_gpu_test.cpp, gpt_recompute_gpu_test.cpp, gpt_adamw_gpu_test.cpp, against this change's
# libraries); then tokens/s: GPT-2 1.5B batch 8 fp8 with both programs, two rounds; 774M batch 12,
# 350M batch 16 (a shape not tuned for) and 124M batch 16 fp8 with both; bf16 at 1.5B, 774M, 350M
# and 124M with this change; Llama 8B-shaped layers (4 blocks, seq 4096, batch 2) fp8 and bf16.
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call2-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$RAW/gpu.txt"

echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptAdamwGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|relative|Failure|Expected|Which is|x scale" "$RAW/unit.txt" | head -30

speed() {  # program tag params...
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 "$1" gpt "${@:3}" --emit records > "$RAW/speed-$2.jsonl" 2>> "$RAW/errs.txt"
  echo "$2 rc=$? in $((SECONDS - start)) s"
}
both() {  # tag params...
  speed scalebench-run-2750cb5 "$1-old" "${@:2}"
  speed scalebench-run "$1-new" "${@:2}"
}
echo "== tokens/s"
both gpt2-1.5b-b8-fp8-r1 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
both gpt2-1.5b-b8-fp8-r2 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
both gpt2-774m-b12-fp8 -p model=gpt2-774m -p micro_batch=12 -p precision=fp8
both gpt2-350m-b16-fp8 -p model=gpt2-350m -p micro_batch=16 -p precision=fp8
both gpt2-124m-b16-fp8 -p model=gpt2-124m -p micro_batch=16 -p precision=fp8
speed scalebench-run gpt2-1.5b-b8-bf16-new -p model=gpt2-1558m -p micro_batch=8 -p precision=bf16
speed scalebench-run gpt2-774m-b12-bf16-new -p model=gpt2-774m -p micro_batch=12 -p precision=bf16
speed scalebench-run gpt2-350m-b16-bf16-new -p model=gpt2-350m -p micro_batch=16 -p precision=bf16
speed scalebench-run gpt2-124m-b16-bf16-new -p model=gpt2-124m -p micro_batch=16 -p precision=bf16
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
tar -C "$OUT" -czf "$OUT/call2-raw.tar.gz" raw && rm -rf "$OUT/raw"
