#!/bin/bash
# One call on the 4 x H200 machine, from the repository root with OUT set: the 1-GPU figures of
# every precision beside PyTorch eager (channels_last), scaling 1 -> 4 GPUs over NVLink (with
# comm_ctas variants) and over PCIe (P2P off), PyTorch DDP, the checks on 2 GPUs. B: the bundle
# (bin/scalebench-run, env.sh); PEERS: a folder with rn50_peer.py, torch_baselines.py, torch_ddp.py
# (copied from docs/results/2026-11-21-train-resnet50-h200/ and examples/pytorch/).
set -u
B=${B:-.gpu-bundle}; PEERS=${PEERS:-.peers-torch}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/w; mkdir -p $W
T0=$(date +%s)
finish() { tar czf $OUT/all.tgz -C $OUT w && rm -rf $W; }
trap finish EXIT
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv > $W/gpu.txt 2>&1
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
R="$E mpirun -np 1 scalebench-run train"
t tiny_np2 60 $E mpirun -np 2 scalebench-run train -p model=tiny -p batch=8 --repetitions 3 --emit records
t h16_np1 90 $R -p batch=256 -p precision=fp16,bf16 -p warmup=5 --repetitions 6 --emit records
t h32_np1 120 $R -p batch=128 -p precision=tf32,fp32 -p warmup=5 --repetitions 6 --emit records
for a in "fp16 256" "bf16 256" "tf32 128" "fp32 128"; do (cd $PEERS && timeout 90 python3 rn50_peer.py $a) >> $W/peer.txt 2>&1; done
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'cudnn', torch.backends.cudnn.version())" >> $W/peer.txt 2>&1
P="-p batch=256 -p warmup=10 -p steps=5 --repetitions 8 --emit records -p check=false"
for p in fp16 bf16; do
  t ${p}_np1 60 $R -p precision=$p $P
  for c in 0 8; do t ${p}_np4_c$c 60 $E mpirun -np 4 scalebench-run train -p precision=$p -p comm_ctas=$c $P; done
  t ${p}_np4_pcie 60 $E mpirun -np 4 -x NCCL_P2P_DISABLE=1 scalebench-run train -p precision=$p -p comm_ctas=8 $P
done
t fp16_np4_nooverlap 60 $E mpirun -np 4 scalebench-run train -p precision=fp16 -p overlap=false $P
for n in 1 4; do (cd $PEERS && timeout 100 torchrun --standalone --nproc_per_node=$n torch_ddp.py) >> $W/ddp.txt 2>&1; done
echo "train done $(( $(date +%s)-T0 ))s" >> $W/summary.txt
