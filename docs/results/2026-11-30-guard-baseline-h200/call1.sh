#!/bin/bash
# One H200: the GPU regression study with the programs of main at 02b41a1 (compare reads a
# parameter a record lacks as its default, train's records carry the image size that ran,
# collective's and copy's time_cap), Fashion-MNIST carried beside the bundle, into a new baseline
# (`--accept`: kept only if every reference passed and every run was ok). Its records are then
# compared with the old baseline on the Debian machine. Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw" /usr/share/datasets/fashion-mnist
tar -xJf .gpu-carry/fmnist.tar.xz -C /usr/share/datasets/fashion-mnist
ls /usr/share/datasets/fashion-mnist
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
start=$SECONDS
timeout 200 $B scripts/gpu-regression.sh --baseline "$OUT/accepted-records.jsonl.gz" --accept --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|records are not ok|^gpu-regression" "$OUT/raw/gr.txt"
cp "$OUT/raw/gr/records.jsonl.gz" "$OUT/records.jsonl.gz" 2>/dev/null
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
