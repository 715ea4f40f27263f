#!/bin/bash
# Call 3 on the same H200 (Fashion-MNIST unpacked again by call0.sh a, then b, as call 2 found a
# fresh machine): the GPU regression study at the end of the session's measuring; then NASNet-A
# Mobile fp16 training at batch 512, ours (pointwise auto) and the compiled PyTorch peer with
# torch.compile's reduce-overhead mode (CUDA graphs of the compiled model and loss; fused SGD with
# GradScaler, whose step needs no host sync), one after another in this call.
. "$(dirname "$0")/lib.sh"
. <(sed -n '/^nasnet() {/,/^}/p' "$(dirname "$0")/../2026-12-02-net-build-fix-h200/call3.sh")  # nasnet NAME PARAM...
gpu_facts
regression_study
nasnet auto -p pointwise=auto
echo "== torch.compile peer (reduce-overhead), NASNet-A Mobile fp16 batch 512"; start=$SECONDS
timeout 440 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 --batch 512 --steps 20 \
  --warmup 5 --compile model --compile-mode reduce-overhead > "$RAW/peer-nasnet-fp16-ro.txt" 2>&1
echo "peer rc=$? in $((SECONDS - start)) s"
grep -v "^ *$" "$RAW/peer-nasnet-fp16-ro.txt" | grep -iv "warn" | tail -4 | cut -c1-600
pack 3
