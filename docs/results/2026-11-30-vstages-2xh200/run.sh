#!/bin/bash
# gpt's interleaved pipeline schedule (virtual_stages), never run on a GPU before, on 2 GPUs of one
# host, within 200 s. First the one-GPU checks (GptGpuPp: the stages, and with virtual stages each
# rank's chunks, on one GPU handing over by copies, against the unsplit model's loss, gradients,
# norm and weights), the interleaved ones on GPU 1 beside the others on GPU 0, with the pure
# schedule, layout and config tests; then GPT-2 124M (seq 1024, micro-batch 8, bf16, synthetic
# tokens) at pp 2 with 1F1B (virtual_stages 1: 8 and 4 blocks) and interleaved (virtual_stages 2:
# virtual stages of 4, 4, 3 and 1 blocks, rank 0 holding the first and third), at grad_accum 8 and
# 16. Prints tokens/s and the measured bubble beside the schedule's theory, (p-1)/(v m+p-1) of the
# step (1/9 and 1/17 for 1F1B, 1/17 and 1/33 interleaved). Run from the repository root with
# B = the bundle's env.sh (scalebench-unit-tests and scalebench-run on its PATH) and $OUT set;
# records, logs and the tests' output go to $OUT/raw.
B=${B:-.gpu-bundle/env.sh}
HERE=$(dirname "$0")
RAW="$OUT/raw"
mkdir -p "$RAW"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv > "$RAW/gpu.txt"

echo "== one-GPU checks (GptGpuPp) and the pure tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=1 timeout 40 $B scalebench-unit-tests --gtest_filter='GptGpuPp.Interleaved*' \
  > "$RAW/unit-interleaved.txt" 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout 40 $B scalebench-unit-tests \
  --gtest_filter='GptGpuPp.*:GptPipelineSchedule.*:GptParallelPlan.*:GptConfig.*:-GptGpuPp.Interleaved*' \
  > "$RAW/unit.txt" 2>&1
echo "unit tests rc=$?"
wait $!
echo "interleaved one-GPU check rc=$? ($((SECONDS - start)) s in all)"
for f in "$RAW/unit.txt" "$RAW/unit-interleaved.txt"; do
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is|gpt2-tiny|what\(\)" "$f" | head -30
done

C="-p model=gpt2-124m -p seq=1024 -p micro_batch=8 -p precision=bf16 -p pp=2 -p warmup=3 -p steps=5"
run() {  # name params...
  local name=$1; shift; start=$SECONDS
  timeout 40 $B mpirun --allow-run-as-root --bind-to none -np 2 scalebench-run gpt $C "$@" --repetitions 3 \
    --emit records > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - start)) s"
  tail -n 2 "$RAW/$name.err"
}
echo "== GPT-2 124M, seq 1024, micro-batch 8, pp 2"
run v1-m8 -p grad_accum=8
run v2-m8 -p grad_accum=8 -p virtual_stages=2
run v1-m16 -p grad_accum=16
run v2-m16 -p grad_accum=16 -p virtual_stages=2
python3 "$HERE/summarise.py" "$RAW"/v1-m8.jsonl "$RAW"/v2-m8.jsonl "$RAW"/v1-m16.jsonl "$RAW"/v2-m16.jsonl |
  tee "$OUT/summary.txt"
