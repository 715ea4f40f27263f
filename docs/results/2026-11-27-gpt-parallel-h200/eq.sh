#!/bin/bash
# Equivalence runs (GPT-2 124M, seq 1024): dp=k vs dp=1 with k x batch, zero 1 vs 0, tp=k vs tp=1.
B=$(cd "$(dirname "$0")" && pwd)
R="$B/env.sh mpirun --allow-run-as-root --bind-to none"
C="-p model=gpt2-124m -p seq=1024 -p warmup=2 -p steps=2 --repetitions 1 --format json"
L=/tmp/eq; mkdir -p $L
run() { name=$1; np=$2; shift 2; timeout 120 $R -np $np scalebench-run gpt $C "$@" > $L/$name.json 2> $L/$name.err || { echo "$name rc=$?"; tail -5 $L/$name.err; }; }
run a_dp1_mb16 1 -p micro_batch=16
run b_dp2_mb8 2 -p micro_batch=8
run c_dp4_mb4 4 -p micro_batch=4
run d_dp4_mb4_zero1 4 -p micro_batch=4 -p zero=1
run e_dp2_mb8_zero1 2 -p micro_batch=8 -p zero=1
run f_dp4_mb4_nooverlap 4 -p micro_batch=4 -p overlap=false
run g_tp1_mb8 1 -p micro_batch=8
run h_tp2_mb8 2 -p micro_batch=8 -p tp=2
run i_tp4_mb8 4 -p micro_batch=8 -p tp=4
run j_dp2tp2_mb8 4 -p micro_batch=8 -p tp=2 -p dp=2
python3 $B/summ.py $L/*.json | tee $OUT/eq-summary.txt
tar czf $OUT/eq-logs.tgz -C $L .
