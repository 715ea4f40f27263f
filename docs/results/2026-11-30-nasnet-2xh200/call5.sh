#!/bin/bash
# Call 5 on 2 x H200 (the session's last 100 s): where NASNet's fp16 training fails, with every
# kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1) so the first failing call is the one named:
# fp16 at batch 512 and 64, and bf16 at 64 for contrast. Run from the repository root with B and
# $OUT set; the records and logs are call5-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT"
for b in 512 64; do
  CUDA_LAUNCH_BLOCKING=1 CUDA_VISIBLE_DEVICES=0 timeout 45 $B mpirun -np 1 scalebench-run train -p model=nasnet \
    -p precision=fp16 -p batch=$b -p algo=heuristic -p warmup=1 -p steps=1 --repetitions 1 --emit records \
    > "$OUT/b$b.jsonl" 2> "$OUT/b$b.err"
  echo "b$b rc=$?"
done
CUDA_LAUNCH_BLOCKING=1 CUDA_VISIBLE_DEVICES=0 timeout 30 $B mpirun -np 1 scalebench-run train -p model=nasnet \
  -p precision=bf16 -p batch=64 -p algo=heuristic -p warmup=1 -p steps=1 --repetitions 1 --emit records \
  > "$OUT/bf16.jsonl" 2> "$OUT/bf16.err"
echo "bf16 rc=$?"
