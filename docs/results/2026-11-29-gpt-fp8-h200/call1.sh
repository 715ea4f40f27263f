#!/bin/bash
# Call 1 on one H200: gpt's precision fp8 (the blocks' GEMMs in FP8, delayed scaling), never run on
# a GPU before. The GPU tests of the FP8 path (the scaled GEMMs against the bf16 product, gpt2-tiny
# and an 8B-shaped Llama block against bf16) and of the bf16 step it touches (its GEMM calls now go
# through block_linear); check 1: GPT-2 124M-shaped on the fortunes, 300 steps from the same seed
# in bf16 and in fp8; then tokens/s of bf16 and fp8 at GPT-2 1.5B (batch 8), Llama 3 8B-shaped
# layers (4 blocks, seq 4096, batch 2) and GPT-2 124M (batch 16). Run from the repository root:
# B = the bundle's env.sh; the bundle carries a copy of /usr/share/games/fortunes (Debian's
# package fortunes, the files `data: fortunes` reads) as .gpu-bundle/fortunes.
B=${B:-.gpu-bundle/env.sh}
FORTUNES=${FORTUNES:-.gpu-bundle/fortunes}  # a copy of /usr/share/games/fortunes
PEER=${PEER:-examples/pytorch/gpt_train.py}
HERE=$(dirname "$0")
RAW=/tmp/fp8-raw  # packed into $OUT/call1-raw.tar.gz at the end (few files come back)
mkdir -p "$RAW"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$RAW/gpu.txt"
run() { timeout "$1" $B mpirun -np 1 scalebench-run gpt "${@:2}" --emit records; }

# fp8-gpu-tests: tests/unit/gpt_fp8_gpu_test.cpp, gpt_fp8_scaling_test.cpp, gpt_gpu_test.cpp and
# gpt_recompute_gpu_test.cpp linked with gtest_main against this commit's libscalebench_gpt (the
# same test sources scalebench-unit-tests compiles; built by hand while it was not yet built).
echo "== unit tests"; start=$SECONDS
timeout 120 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.CudnnAttentionMatchesNaive:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "unit tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|relative errors|^loss:|^llama|Failure|Expected|Which is" "$RAW/unit.txt" | head -40

echo "== check 1: 300 steps on the fortunes, GPT-2 124M-shaped, seq 512, batch 16, seed 1234"
for p in bf16 fp8; do
  start=$SECONDS
  run 90 -p model=gpt2-124m -p data=$FORTUNES -p seq=512 -p micro_batch=16 -p train_steps=300 \
    -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 -p precision=$p \
    > "$RAW/text-$p.jsonl" 2>> "$RAW/errs.txt"
  echo "text $p rc=$? in $((SECONDS - start)) s"
done

speed() {  # model batch precision
  start=$SECONDS
  run 80 -p model=$1 -p micro_batch=$2 -p precision=$3 >> "$RAW/speed.jsonl" 2>> "$RAW/errs.txt"
  echo "$1 b$2 $3 rc=$? in $((SECONDS - start)) s"
}
echo "== tokens/s, synthetic tokens, seq 1024: GPT-2 1.5B batch 8"
speed gpt2-1558m 8 bf16
speed gpt2-1558m 8 fp8

echo "== tokens/s, Llama 3 8B-shaped layers: 4 blocks, seq 4096, batch 2"
speedl() {  # precision
  start=$SECONDS
  run 80 -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=$1 >> "$RAW/speed.jsonl" \
    2>> "$RAW/errs.txt"
  echo "llama3-8b x4 b2 seq4096 $1 rc=$? in $((SECONDS - start)) s"
}
speedl bf16
speedl fp8
echo "== tokens/s, GPT-2 124M batch 16"
speed gpt2-124m 16 bf16
speed gpt2-124m 16 fp8

python3 "$HERE/summarise.py" "$RAW"/text-*.jsonl "$RAW/speed.jsonl"
tail -n 20 "$RAW/errs.txt"
tar -czf "$OUT/call1-raw.tar.gz" -C /tmp fp8-raw
