#!/bin/bash
# Call 1 on 2 x H200, trimmed from run.sh to the session's last 5 minutes of device time: the
# one-GPU check of pp (GptGpuPp: the stages on one GPU against the unsplit model), then GPT-2 124M
# (seq 1024, micro-batch 8, bf16) at pp 1 on one GPU, pp 2 on two at grad_accum 8 and 16, and dp 2.
# Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
HERE=$(dirname "$0")
RAW=/tmp/pp-raw
rm -rf "$RAW" && mkdir -p "$RAW"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== GptGpuPp (GPU 0)"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 70 $B scalebench-unit-tests --gtest_filter='GptGpuPp.*' > "$RAW/unit.txt" 2>&1
echo "unit tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is" "$RAW/unit.txt" | head -24
C="-p model=gpt2-124m -p seq=1024 -p micro_batch=8 -p grad_accum=8 -p precision=bf16 -p warmup=3 -p steps=5"
run() {  # name ranks params...
  local name=$1 np=$2; shift 2; start=$SECONDS
  timeout 45 $B mpirun --allow-run-as-root --bind-to none -np "$np" scalebench-run gpt $C "$@" --repetitions 3 \
    --emit records > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - start)) s"
  tail -n 2 "$RAW/$name.err"
}
echo "== GPT-2 124M, seq 1024, micro-batch 8"
CUDA_VISIBLE_DEVICES=0 run pp1 1
run pp2 2 -p pp=2
run pp2-m16 2 -p pp=2 -p grad_accum=16
run dp2 2 -p dp=2
python3 "$HERE/summarise.py" "$RAW"/pp1.jsonl "$RAW"/pp2.jsonl "$RAW"/dp2.jsonl "$RAW"/pp2-m16.jsonl | tee "$OUT/summary.txt"
tar -czf "$OUT/raw.tar.gz" -C /tmp pp-raw
