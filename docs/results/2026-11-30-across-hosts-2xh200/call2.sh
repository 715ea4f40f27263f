#!/bin/bash
# Call 2 on 2 x H200 (issue 46's 2-GPU columns and its one-GPU peer): Inception v3 and v4 in
# `train`, fp16 batch 512 per GPU, 1 and 2 GPUs, NVLink against PCIe (inception-scaling.yaml);
# then on GPU 0 alone, torch.compile of torchvision's inception_v3 and of inception_v4.py at the
# same precision and batch (examples/pytorch/ddp_train.py, channels_last, fp16 autocast with a
# GradScaler, fused SGD), one after the other. Run from the repository root.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
echo "== inception study"; start=$SECONDS
timeout 330 $B scalebench study "$D/inception-scaling.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -E "^run |inception|images/s" "$OUT/raw/study.txt" | tail -12
$B scalebench results --db "$OUT/raw/study.db" --format json > "$OUT/raw/records.jsonl"
$B scalebench results --db "$OUT/raw/study.db" | grep -E "throughput|^run" | head -12
$B scalebench ratio --db "$OUT/raw/study.db" --metric throughput 2>&1 | tail -5
echo "== torch.compile peers, GPU 0"
for m in inception_v3 inception_v4; do
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 NCCL_NVLS_ENABLE=0 timeout 200 python3 examples/pytorch/ddp_train.py --model $m --batch 512 \
    --precision fp16 --steps 20 --warmup 10 --compile model > "$OUT/raw/peer-$m.txt" 2>&1
  echo "$m rc=$? in $((SECONDS - start)) s"; grep -E "^(images/s|step_ms|setup|warmup_s|loss)" "$OUT/raw/peer-$m.txt"
done
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
