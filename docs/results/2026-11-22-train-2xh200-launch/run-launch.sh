#!/bin/bash
# fp16 ResNet-50 on NP GPUs: all-reduces launched when ready (DDP's) against after the next
# persistent fused batch norm (bucket_launch=after_fused_bn), each beside a 1-GPU run of the same round;
# rounds interleaved, the order of the two alternating. Then bf16 and tf32 (no fused batch norm:
# the two must be the same). From the repository root on the GPU machine, OUT set; NP (default 2),
# ROUNDS (default 4), BUDGET (seconds after which no run starts, default 520).
set -u
NP=${NP:-2}; ROUNDS=${ROUNDS:-4}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin launch ${BUDGET:-520}
nvidia-smi topo -m > $RUNS_DIR/topo.txt 2>&1
run_round() { local round=$1 p=$2 b=$3
  P="-p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records -p timeline=true"
  timed_run r${round}_${p}_np1 90 $E mpirun -np 1 scalebench-run train $P
  if [ $((round % 2)) = 1 ]; then order="ready after_fused_bn"; else order="after_fused_bn ready"; fi
  for l in $order; do timed_run r${round}_${p}_np${NP}_$l 90 $E mpirun -np $NP scalebench-run train $P -p bucket_launch=$l; done
}
for round in $(seq $ROUNDS); do run_round $round fp16 256; done
run_round 9 bf16 256
run_round 9 tf32 128
