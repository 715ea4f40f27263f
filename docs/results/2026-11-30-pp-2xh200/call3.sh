#!/bin/bash
# Call 3 on 2 x H200, the session's last device seconds: the stages balanced by cost (the head
# counts head_cost_in_blocks() blocks: 4.47 for GPT-2 124M at seq 1024, so 2 stages hold 8 and 4
# blocks instead of 6 and 6). GPT-2 124M (seq 1024, micro-batch 8, bf16) at pp 1 on one GPU and
# pp 2 at 8 and 16 micro-batches, as call 1. Run from the repository root with B and $OUT set.
B=${B:-.gpu-bundle/env.sh}
HERE=$(dirname "$0")
RAW=/tmp/pp-raw3
rm -rf "$RAW" && mkdir -p "$RAW"
C="-p model=gpt2-124m -p seq=1024 -p micro_batch=8 -p grad_accum=8 -p precision=bf16 -p warmup=3 -p steps=5"
run() {  # name ranks params...
  local name=$1 np=$2; shift 2; start=$SECONDS
  timeout 40 $B mpirun --allow-run-as-root --bind-to none -np "$np" scalebench-run gpt $C "$@" --repetitions 3 \
    --emit records > "$RAW/$name.jsonl" 2> "$RAW/$name.err"
  echo "$name rc=$? in $((SECONDS - start)) s"
}
CUDA_VISIBLE_DEVICES=0 run pp1 1
run pp2 2 -p pp=2
run pp2-m16 2 -p pp=2 -p grad_accum=16
python3 "$HERE/summarise.py" "$RAW"/pp1.jsonl "$RAW"/pp2.jsonl "$RAW"/pp2-m16.jsonl | tee "$OUT/summary3.txt"
tar -czf "$OUT/raw.tar.gz" -C /tmp pp-raw3
