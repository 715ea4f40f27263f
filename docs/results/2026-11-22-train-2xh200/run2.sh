#!/bin/bash
# The second call on the 2 x H200 machine, from the repository root with OUT set:
# (1) per-step jitter: ResNet-50 fp16 and bf16 on one GPU timed one step per sample (60 samples)
#     while nvidia-smi samples clocks, power and the clock event reasons every 100 ms, then the
#     same beside a 2-GPU run; (2) examples/resnet50-scaling.yaml as a study (local coordinator
#     and agent), its report; (3) fp16 at batch 512, 1 and 2 GPUs, if time is left.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/train2; mkdir -p $W
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
Q=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv -c 1 > /dev/null 2>&1 || Q=${Q/clocks_event_reasons/clocks_throttle_reasons}
smi() { nvidia-smi --query-gpu=$Q --format=csv -lms 100 > $W/smi-$1.csv 2>&1 & SMI=$!; }
J="-p batch=256 -p warmup=10 -p steps=1 --repetitions 60 --emit records -p check=false"
for p in fp16 bf16; do
  smi ${p}_np1; t jitter_${p}_np1 60 $E mpirun -np 1 scalebench-run train -p precision=$p $J; kill $SMI
  smi ${p}_np2; t jitter_${p}_np2 60 $E mpirun -np 2 scalebench-run train -p precision=$p $J; kill $SMI
done
t study 400 scalebench study examples/resnet50-scaling.yaml --db $W/study.db --logs $W/study-logs
t report 60 scalebench report --db $W/study.db --out $W/report
scalebench results --db $W/study.db --format json > $W/results.jsonl 2>> $W/summary.txt
P="-p batch=512 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
t fp16_b512_np1 60 $E mpirun -np 1 scalebench-run train -p precision=fp16 $P
t fp16_b512_np2 60 $E mpirun -np 2 scalebench-run train -p precision=fp16 $P
