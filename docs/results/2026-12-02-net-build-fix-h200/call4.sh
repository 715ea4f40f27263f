#!/bin/bash
# Call 4 on an H200 (Fashion-MNIST unpacked on that machine): NASNet-A Mobile fp16 training at batch
# 512, ours (pointwise auto and cudnn) and the compiled PyTorch peer (ddp_train.py: torch.compile of
# model and loss, channels_last, autocast with GradScaler, fused SGD) one after another in this
# call; then the GPU regression study again, this being the session's last device work.
. "$(dirname "$0")/../2026-12-02-fused-fp16-h200/lib.sh"
. <(sed -n '/^nasnet() {/,/^}/p' "$(dirname "$0")/call3.sh")  # call 3's nasnet NAME PARAM...
gpu_facts
nasnet auto-3 -p pointwise=auto
nasnet cudnn-2 -p pointwise=cudnn
echo "== torch.compile peer, NASNet-A Mobile fp16 batch 512"; start=$SECONDS
timeout 420 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 --batch 512 --steps 20 \
  --warmup 5 --compile model > "$RAW/peer-nasnet-fp16.txt" 2>&1
echo "peer rc=$? in $((SECONDS - start)) s"
grep -v "^ *$" "$RAW/peer-nasnet-fp16.txt" | grep -iv "warn" | tail -4 | cut -c1-600
regression_study
pack 4
