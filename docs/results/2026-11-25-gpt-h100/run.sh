#!/bin/bash
# One call on one GPU: the gpt workload's checks and 124M timing, the PyTorch peers (eager and
# torch.compile, torch_gpt.py, the PyTorch peer of the time, now examples/pytorch/torch_gpt.py, copied to $PEERS) on the same GPU right after,
# then examples/gpt.yaml under `scalebench study` and its report. Run from the repository root
# with B pointing at the bundle's env.sh and OUT at a folder for the logs.
B=${B:-.gpu-bundle/env.sh}
PEERS=${PEERS:-.gpt-dev}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,driver_version --format=csv,noheader
echo "== gradcheck"; timeout 120 $B scalebench-gpt-check gradcheck; echo "rc=$?"
echo "== time 124M bs16"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10; echo "rc=$?"
echo "== torch eager 124M"; timeout 120 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024; echo "rc=$?"
echo "== torch compile 124M"; timeout 200 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 --compile; echo "rc=$?"
echo "== study examples/gpt.yaml"; timeout 240 $B scalebench study examples/gpt.yaml --db "$OUT/gpt.db"; echo "rc=$?"
$B scalebench results --db "$OUT/gpt.db" --format table
timeout 60 $B scalebench report --db "$OUT/gpt.db" --experiment gpt --out "$OUT/gpt-report"; echo "rc=$?"
