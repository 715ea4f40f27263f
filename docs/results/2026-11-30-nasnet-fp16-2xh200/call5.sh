#!/bin/bash
# Call 5 on 2 x H200 (the machine of call 4): the regression study's convolution point alone, to
# tell a regression of the code from one of the machine: 3 runs on GPU 0 with GPU 1 idle, 3 while
# GPU 1 runs int8 convolutions, 1 on GPU 1; then the clocks. Run from the repository root with B
# set; the console is call5-console.txt.
B=${B:-.gpu-bundle/env.sh}
C="-p shapes=128x128x3x3@28x28:p1 -p batch=64 -p precision=fp16 -p pass=fwd -p layout=nhwc -p algo=heuristic -p time_cap=0.05"
for i in 1 2 3; do CUDA_VISIBLE_DEVICES=0 $B mpirun --allow-run-as-root -np 1 scalebench-run conv $C --repetitions 5 2>&1 | grep "128x128"; done
echo "-- beside int8 convs on GPU 1"
(CUDA_VISIBLE_DEVICES=1 timeout 60 $B mpirun --allow-run-as-root -np 1 scalebench-run conv -p precision=int8 -p pass=fwd --repetitions 20 > /dev/null 2>&1 &)
sleep 8
for i in 1 2 3; do CUDA_VISIBLE_DEVICES=0 $B mpirun --allow-run-as-root -np 1 scalebench-run conv $C --repetitions 5 2>&1 | grep "128x128"; done
echo "-- GPU 1 alone"
sleep 1
CUDA_VISIBLE_DEVICES=1 $B mpirun --allow-run-as-root -np 1 scalebench-run conv $C --repetitions 5 2>&1 | grep "128x128"
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
