#!/bin/bash
# One GPU: the gpt workload's Llama-style step (issue 29):
# the fp64 gradient checks (llama-tiny and GPT-2), GPT-2 124M again (the step was split by family),
# then 4 and 8 of Llama 3 8B's layers (width 4096, 32 heads, 8 KV heads, MLP 14336, vocabulary
# 128256) at seq 4096 and 2048. Run from the repository root with B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== gradcheck llama-tiny"; timeout 120 $B scalebench-gpt-check gradcheck cudnn llama-tiny; echo "rc=$?"
echo "== gradcheck gpt2-tiny"; timeout 120 $B scalebench-gpt-check gradcheck; echo "rc=$?"
echo "== GPT-2 124M bs16"; timeout 120 $B scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn; echo "rc=$?"
echo "== Llama 8B-shaped, 4 layers, seq 4096, micro-batch 2, accumulation 4"
timeout 200 $B scalebench-gpt-check time llama3-8b 2 4096 4 3 3 cudnn 4; echo "rc=$?"
echo "== Llama 8B-shaped, 8 layers, seq 2048, micro-batch 4, accumulation 4"
timeout 200 $B scalebench-gpt-check time llama3-8b 4 2048 4 3 3 cudnn 8; echo "rc=$?"
