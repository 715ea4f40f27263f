#!/bin/bash
# One GPU: the GPU unit tests (TrainGpu.*), then per round and precision scalebench's ResNet-50
# training steps and PyTorch eager (channels_last, rn50_peer.py) in an order that alternates by
# round. From the repository root on the GPU machine, OUT set; PEERS (rn50_peer.py's folder,
# with examples/pytorch/torch_baselines.py beside it),
# ROUNDS (default 2), PRECS (precision:batch), BUDGET (seconds after which no run starts).
set -u
ROUNDS=${ROUNDS:-2}; PEERS=${PEERS:-.peers-torch}
PRECS=${PRECS:-"fp16:256 bf16:256 tf32:128 fp32:128"}
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
source scripts/timed-runs.sh
runs_begin ${NAME:-eager} ${BUDGET:-480}
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv > $RUNS_DIR/gpu.txt 2>&1
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'cudnn', torch.backends.cudnn.version())" > $RUNS_DIR/torch.txt 2>&1
timed_run unit-tests 120 $E scalebench-unit-tests --gtest_filter='TrainGpu.*'
for round in $(seq $ROUNDS); do
  for pb in $PRECS; do
    p=${pb%:*}; b=${pb#*:}
    order="scalebench torch"; [ $((round % 2)) = 0 ] && order="torch scalebench"
    for who in $order; do
      if [ $who = scalebench ]; then
        timed_run r${round}_${p}_scalebench 120 $E mpirun -np 1 scalebench-run train -p precision=$p -p batch=$b -p warmup=10 -p steps=5 --repetitions 8 --emit records
      else
        timed_run r${round}_${p}_torch 120 bash -c "cd $PEERS && python3 rn50_peer.py $p $b"
      fi
    done
  done
done
