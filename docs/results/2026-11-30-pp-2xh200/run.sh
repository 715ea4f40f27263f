#!/bin/bash
# gpt's pipeline parallelism (pp, the 1F1B schedule), never run on a GPU before, on 2 GPUs of one
# host. First the GPU tests of gpt (GptGpuPp: the stages on one GPU, handing over by copies, against
# the unsplit model's loss, gradients, norm and weights; and the tests of the step pp touches),
# then GPT-2 124M (seq 1024, micro-batch 8, grad_accum 8, bf16, synthetic tokens): pp 1 on one GPU,
# pp 2 on two (the same batch: its loss must be pp 1's), dp 2 on two (twice the tokens a step), pp 2
# with recompute, and pp 2 with grad_accum 16. Prints tokens/s, the losses and the measured bubble
# beside the schedule's (p-1)/(m+p-1) (1/9 at m 8, 1/17 at m 16). Run from the repository root:
# B = the bundle's env.sh (scalebench-unit-tests and scalebench-run on its PATH); raw records and
# logs go to $OUT/raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
HERE=$(dirname "$0")
RAW=/tmp/pp-raw  # packed into $OUT/raw.tar.gz at the end (few files come back)
rm -rf "$RAW" && mkdir -p "$RAW"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv | tee "$RAW/gpu.txt"
nvidia-smi topo -m | head -4

echo "== GPU tests of gpt (GPU 0)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 400 $B scalebench-unit-tests \
  --gtest_filter='GptGpuPp.*:GptGpuTp.*:GptGpu.*:GptRecomputeGpu.*:GptPipelineSchedule.*:GptParallelPlan.*:GptConfig.*' \
  > "$RAW/unit.txt" 2>&1
echo "unit tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is|gpt2-tiny" "$RAW/unit.txt" | head -40

C="-p model=gpt2-124m -p seq=1024 -p micro_batch=8 -p grad_accum=8 -p precision=bf16 -p warmup=3 -p steps=5"
run() {  # name ranks params...
  local name=$1 np=$2; shift 2; start=$SECONDS
  timeout 240 $B mpirun --allow-run-as-root --bind-to none -np "$np" scalebench-run gpt $C "$@" --repetitions 3 \
    --emit records > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - start)) s"
  tail -n 3 "$RAW/$name.err"
}
echo "== GPT-2 124M, seq 1024, micro-batch 8, grad_accum 8"
CUDA_VISIBLE_DEVICES=0 run pp1 1
run pp2 2 -p pp=2
run dp2 2 -p dp=2
run pp2-recompute 2 -p pp=2 -p recompute=true
run pp2-m16 2 -p pp=2 -p grad_accum=16  # theory 1/17

python3 "$HERE/summarise.py" "$RAW"/pp1.jsonl "$RAW"/pp2.jsonl "$RAW"/dp2.jsonl "$RAW"/pp2-recompute.jsonl \
  "$RAW"/pp2-m16.jsonl | tee "$OUT/summary.txt"
tar -czf "$OUT/raw.tar.gz" -C /tmp pp-raw
