#!/bin/bash
# Time to accuracy on Fashion-MNIST on 1, 2 and 4 GPUs of one host (issue 33, data parallel), 5
# seeds each to the default target 0.937 within the 10-epoch schedule, under two batch rules:
#   weak:   batch 512 per GPU, global batch 512 x GPUs, peak rate 0.4 x global/512 (linear rule);
#   strong: global batch 512 split over the GPUs (512/GPUs each), the 1-GPU rate.
# Run from the repository root with B = the bundle's env.sh, DATA = a folder with the four IDX .gz
# files of Debian's dataset-fashion-mnist, OUT = a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
TARGET=${TARGET:-0.937}
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
nvidia-smi topo -m | head -6
tta() {  # gpus batch-per-gpu log
  timeout 150 $B mpirun -np "$1" --allow-run-as-root -x NCCL_NVLS_ENABLE=0 scalebench-run train -p data="$DATA" \
    -p model=fmnist-resnet -p precision=bf16 -p batch="$2" -p weight_decay=5e-4 -p target_accuracy="$TARGET" \
    -p max_epochs=10 -p seeds=5 > "$OUT/$3" 2>&1
  echo "== $3: $1 GPU(s), batch $2 per GPU: rc=$?"; grep -E "^tta|^#" "$OUT/$3" | grep -v "^# *$" | head -12
}
tta 1 512 tta-1gpu.log
tta 2 512 tta-2gpu-weak.log
tta 4 512 tta-4gpu-weak.log
tta 2 256 tta-2gpu-strong.log
tta 4 128 tta-4gpu-strong.log
