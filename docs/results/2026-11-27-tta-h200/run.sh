#!/bin/bash
# One GPU: time to accuracy on Fashion-MNIST (issue 33): scalebench's train workload
# to a target over 5 seeds, the same recipe in PyTorch eager and torch.compile
# (examples/pytorch/fmnist_tta.py) with the same target, epochs and seeds, then 20 seeds run to the
# end of the schedule for the accuracy that 95% of seeds reach (the default target's rule). Run from
# the repository root with B = the bundle's env.sh, DATA = a folder with the four IDX .gz files of
# Debian's dataset-fashion-mnist, OUT = a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
DATA=${DATA:-/usr/share/datasets/fashion-mnist}
TARGET=${TARGET:-0.90}
EPOCHS=${EPOCHS:-10}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
tta() {  # seeds target seconds
  timeout "$3" $B mpirun -np 1 scalebench-run train -p data="$DATA" -p model=fmnist-resnet -p precision=bf16 -p batch=512 \
    -p weight_decay=5e-4 -p target_accuracy="$2" -p max_epochs="$EPOCHS" -p seeds="$1"
}
echo "== scalebench, 5 seeds to $TARGET"; tta 5 "$TARGET" 120 > "$OUT/tta-5.log" 2>&1; echo "rc=$?"; grep -E "^tta|^#" "$OUT/tta-5.log"
echo "== PyTorch eager and torch.compile, 5 seeds to $TARGET"
timeout 260 python3 examples/pytorch/fmnist_tta.py --data "$DATA" --mode both --seeds 5 --target "$TARGET" \
  --max-epochs "$EPOCHS" > "$OUT/torch-5.log" 2>&1; echo "rc=$?"; grep -E "^tta|^#" "$OUT/torch-5.log"
echo "== scalebench, 20 seeds to the end of the schedule"; tta 20 0.999 150 > "$OUT/tta-20.log" 2>&1; echo "rc=$?"; grep -E "^tta" "$OUT/tta-20.log" | tail -n 22
