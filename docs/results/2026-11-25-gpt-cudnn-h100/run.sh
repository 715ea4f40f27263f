#!/bin/bash
# One call on one GPU: the gpt workload with cuDNN's fused attention (the default) against the
# naive path and the PyTorch peers in the same call, then the GPU unit tests, the node-check
# workloads and the quick study's GPU part. Run from the repository root with B pointing at the
# bundle's env.sh, PEERS at a folder holding torch_gpt.py and compare_torch.py (examples/pytorch/torch_gpt.py,
# tests/gpt/compare_torch.py), OUT at a folder.
B=${B:-.gpu-bundle/env.sh}
PEERS=${PEERS:-.gpt-dev}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== gradcheck (cudnn)"; timeout 120 $B scalebench-gpt-check gradcheck; echo "rc=$?"
echo "== PyTorch comparison (cudnn)"; timeout 120 $B scalebench-gpt-check dump "$OUT/d" gpt2-tiny 4 64 >/dev/null &&
  timeout 120 python3 $PEERS/compare_torch.py "$OUT/d" --peer $PEERS/torch_gpt.py; echo "rc=$?"
echo "== time 124M bs16 cudnn"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn; echo "rc=$?"
echo "== time 124M bs16 naive"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 naive; echo "rc=$?"
echo "== torch eager 124M"; timeout 120 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024; echo "rc=$?"
echo "== torch compile 124M"; timeout 200 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 --compile; echo "rc=$?"
echo "== time 124M bs16 cudnn again"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn; echo "rc=$?"
echo "== time 1.5B bs8 cudnn"; timeout 150 $B scalebench-gpt-check time gpt2-1558m 8 1024 1 3 5 cudnn; echo "rc=$?"
# (the GPU unit tests ran in the acceptance call: the bundle's size limit)
echo "== hbm"; for op in read write copy triad; do
  timeout 60 $B mpirun -np 1 scalebench-run hbm -p op=$op 2>&1 | grep -v "^#\|info"; done
echo "== quick-gpu study"; timeout 240 $B scalebench study examples/quick-gpu.yaml --db "$OUT/quick-gpu.db" > "$OUT/quick-gpu.log" 2>&1; echo "rc=$?"
grep -E "^[0-9]+ |records in" "$OUT/quick-gpu.log"
$B scalebench results --db "$OUT/quick-gpu.db" --format json > "$OUT/quick-gpu.jsonl"
