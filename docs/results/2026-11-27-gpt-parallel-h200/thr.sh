#!/bin/bash
# Throughput runs: thr.sh TAG MODEL MICRO_BATCH; dp 1/2/4, tp 2/4, NVLink and NCCL_P2P_DISABLE=1, overlap on/off.
B=$(cd "$(dirname "$0")" && pwd)
TAG=$1; MODEL=$2; MB=$3
L=/tmp/thr-$TAG; mkdir -p $L
C="-p model=$MODEL -p seq=1024 -p micro_batch=$MB -p warmup=3 -p steps=5 --repetitions 3 --format json"
# run NAME RANKS MPIRUN_ENV PARAMS...
run() { name=$1; np=$2; x=$3; shift 3; timeout 150 $B/env.sh mpirun --allow-run-as-root --bind-to none $x -np $np scalebench-run gpt $C "$@" > $L/$name.json 2> $L/$name.err || { echo "$name rc=$?"; tail -3 $L/$name.err; }; }
N="-x NCCL_NVLS_ENABLE=0"; P="-x NCCL_P2P_DISABLE=1"
run 01_dp1 1 "$N"
run 02_dp2 2 "$N"
run 03_dp4 4 "$N"
run 04_dp4_nooverlap 4 "$N" -p overlap=false
run 05_tp2 2 "$N" -p tp=2
run 06_tp4 4 "$N" -p tp=4
run 07_dp4_zero1 4 "$N" -p zero=1
run 08_dp4_pcie 4 "$P"
run 09_dp4_pcie_nooverlap 4 "$P" -p overlap=false
run 10_tp4_pcie 4 "$P" -p tp=4
python3 $B/summ.py $L/*.json | tee $OUT/thr-$TAG-summary.txt
tar czf $OUT/thr-$TAG-logs.tgz -C $L .
