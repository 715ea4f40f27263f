#!/bin/bash
# fp16 ResNet-50 on NP GPUs: all-reduces launched when ready (DDP's) against after the next
# persistent fused batch norm (bucket_launch=after_fused_bn), each beside a 1-GPU run of the same round;
# rounds interleaved, the order of the two alternating. Then bf16 and tf32 (no fused batch norm:
# the two must be the same). From the repository root on the GPU machine, OUT set; NP (default 2),
# ROUNDS (default 4).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-4}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/launch; mkdir -p $W
finish() { tar czf $OUT/launch.tgz -C $OUT launch; }
trap finish EXIT
T0=$(date +%s)
t() { local name=$1 lim=$2; shift 2
  if [ $(( $(date +%s) - T0 )) -gt 520 ]; then echo "$name not run: out of time" >> $W/runs.txt; return; fi
  local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/runs.txt; gzip -f $W/$name.log; }
nvidia-smi -q -d POWER,CLOCK > $W/smi.txt 2>&1
nvidia-smi topo -m > $W/topo.txt 2>&1
run_round() { local round=$1 p=$2 b=$3
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=true"
  t r${round}_${p}_np1 90 $E mpirun -np 1 scalebench-run train $P
  if [ $((round % 2)) = 1 ]; then order="ready after_fused_bn"; else order="after_fused_bn ready"; fi
  for l in $order; do t r${round}_${p}_np${NP}_$l 90 $E mpirun -np $NP scalebench-run train $P -p bucket_launch=$l; done
}
for round in $(seq $ROUNDS); do run_round $round fp16 256; done
run_round 9 bf16 256
run_round 9 tf32 128
