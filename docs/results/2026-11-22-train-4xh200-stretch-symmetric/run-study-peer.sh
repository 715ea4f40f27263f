#!/bin/bash
# Call 3: PyTorch eager on one GPU (4 precisions), then examples/resnet50-scaling.yaml as a study on
# all GPUs (local coordinator and agent) and its report, then PyTorch DDP (AMP bf16, batch 256 per
# GPU) on 1 and 4 GPUs, in one call. OUT set; B=BUNDLE (scalebench, scalebench-agent,
# scalebench-coordinator, scalebench-run, env.sh); PEERS: rn50_peer.py, torch_baselines.py, torch_ddp.py (copied from
# docs/results/2026-11-21-train-resnet50-h200/ and examples/pytorch/).
# DDP: the GPU counts DDP runs on (default "1 4"; "1 2" on a 2-GPU machine; empty: no DDP).
set -u
B=${B:-.gpu-bundle}; PEERS=${PEERS:-.peers-torch}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/k; mkdir -p $W
finish() { tar czf $OUT/k.tgz -C $OUT k; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv > $W/gpu.txt 2>&1
T0=$(date +%s)
for a in "fp16 256" "bf16 256" "tf32 128" "fp32 128"; do (cd $PEERS && timeout 60 python3 rn50_peer.py $a) >> $W/peer.txt 2>&1; done
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'cudnn', torch.backends.cudnn.version())" >> $W/peer.txt 2>&1
echo "peer $(( $(date +%s)-T0 ))s" >> $W/summary.txt
t study 420 $E scalebench study examples/resnet50-scaling.yaml --db $W/study.db --logs $W/study-logs
t report 30 $E scalebench report --db $W/study.db --out $W/report
$E scalebench results --db $W/study.db --format json > $W/results.jsonl 2>> $W/summary.txt
for n in ${DDP-1 4}; do (cd $PEERS && timeout 120 torchrun --standalone --nproc_per_node=$n torch_ddp.py) > $W/ddp-$n.txt 2>&1; echo "ddp $n rc=$?" >> $W/summary.txt; done
