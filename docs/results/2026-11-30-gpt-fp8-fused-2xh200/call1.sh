#!/bin/bash
# Call 1 on 2 x H200, the session's start: the GPU regression study on GPU 0 (Fashion-MNIST
# unpacked by the call before: `tar -xJf .gpu-data/fmnist.tar.xz -C /usr/share/datasets/fashion-mnist`),
# with the programs of ea7c766 (the GPU code as the last session left it). Run from the repository
# root with B = the bundle's env.sh and $OUT set; everything lands in $OUT/call1-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m > "$OUT/raw/topo.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "^(regressed|improved|missing|new) |[0-9]+ regressions|gpu-regression:" "$OUT/raw/gr.txt" | cut -c1-200 | tail -40
tar -C "$OUT" -czf "$OUT/call1-raw.tar.gz" raw && rm -rf "$OUT/raw"
