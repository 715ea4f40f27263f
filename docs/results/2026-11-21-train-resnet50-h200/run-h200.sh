#!/bin/bash
# The 1 x H200 call (run from the GPU machine's copy of the tree, with OUT set).
B=.gpu-bundle-train
R="$B/env.sh mpirun --allow-run-as-root -np 1 scalebench-run train"
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
t() { local name=$1; shift; echo "== $name" >> $OUT/summary.txt; timeout $1 ${@:2} > $OUT/$name.log 2>&1; echo "rc=$?" >> $OUT/$name.log; }
t tiny 60 $R -p model=tiny -p batch=8 -p precision=fp32 --repetitions 3 --emit records
t rn50_16 150 $R -p batch=256 -p precision=fp16,bf16 --repetitions 10 --emit records
t rn50_32 150 $R -p batch=128 -p precision=tf32,fp32 -p warmup=5 --repetitions 6 --emit records
t rn50_nofuse 60 $R -p batch=256 -p precision=fp16 -p fuse=false -p check=false -p warmup=5 --repetitions 5 --emit records
t rn50_inf 60 $R -p mode=inference -p batch=1,64,256 -p precision=fp16,bf16 -p warmup=5 --repetitions 10 --emit records
cd .peers-torch
for a in "fp16 256" "bf16 256" "tf32 128" "fp32 128"; do timeout 90 python3 rn50_peer.py $a >> $OUT/peer.txt 2>&1; done
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'cudnn', torch.backends.cudnn.version())" >> $OUT/peer.txt 2>&1
