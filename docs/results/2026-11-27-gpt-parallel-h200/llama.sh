#!/bin/bash
# Llama tensor parallelism (and its data parallelism) against one GPU, plus two GPT-2 repeats.
B=$(cd "$(dirname "$0")" && pwd)
L=/tmp/ll; mkdir -p $L
run() { name=$1; np=$2; shift 2; timeout 150 $B/env.sh mpirun --allow-run-as-root --bind-to none -np $np scalebench-run gpt -p warmup=2 -p steps=2 --repetitions 1 --format json "$@" > $L/$name.json 2> $L/$name.err || { echo "$name rc=$?"; tail -4 $L/$name.err; }; }
M="-p model=llama3-8b -p layers=2 -p seq=1024"
run l1_tp1_mb2 1 $M -p micro_batch=2
run l2_tp2_mb2 2 $M -p micro_batch=2 -p tp=2
run l3_tp4_mb2 4 $M -p micro_batch=2 -p tp=4
run l4_dp2_mb1 2 $M -p micro_batch=1
run l5_dp2_mb1_zero1 2 $M -p micro_batch=1 -p zero=1
run l6_dp2tp2_mb1 4 $M -p micro_batch=1 -p tp=2 -p dp=2
G="-p model=gpt2-124m -p seq=1024"
run g1_tp2_mb8 2 $G -p micro_batch=8 -p tp=2
run g2_dp2_mb8 2 $G -p micro_batch=8
python3 $B/summ.py $L/*.json | tee $OUT/llama-summary.txt
