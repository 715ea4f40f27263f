#!/bin/bash
# The gemm workload and torch.matmul side by side on one GPU, in one go. Run with B and PEERS set
# (the folder of gemm_peer.py); logs go to $OUT.
B=${B:?the folder with bin/scalebench-run and env.sh (its library path)}
PEERS=${PEERS:-.}
OUT=${OUT:-/tmp/gemm-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
# The peer first: torch.matmul at 8192^3 (randn and grid data), then a few DeepBench shapes.
timeout 40 python3 $PEERS/gemm_peer.py 8192x8192x8192 > "$OUT/torch.txt" 2>&1
shapes="square,5124x9124x2048,35x8457x4096,7680x5481x2560:nt,3072x1x1024"
for p in bf16 fp16 tf32 fp32 fp64 fp8e4m3 int8; do
  timeout 20 $B/env.sh mpirun -np 1 scalebench-run gemm -p precision=$p -p sizes=8192 -p shapes=$shapes \
    -p time_cap=0.4 --repetitions 10 --emit records > "$OUT/gemm-$p.jsonl" 2> "$OUT/gemm-$p.err"
  echo "$p rc=$?" >> "$OUT/rc.txt"
done
# The table a user sees, with fp8 e5m2 (e5m2 x e4m3) at 8192^3.
timeout 15 $B/env.sh mpirun -np 1 scalebench-run gemm -p precision=fp8e5m2 -p sizes=8192 -p time_cap=0.4 \
  --repetitions 10 > "$OUT/table-fp8e5m2.txt" 2>&1
# torch again at the end (the GPU as warm as for the gemm runs), when time is left.
[ $SECONDS -lt 85 ] && timeout 25 python3 $PEERS/gemm_peer.py 8192x8192x8192 > "$OUT/torch-after.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt" 2>&1
tail -n 40 "$OUT"/torch.txt "$OUT"/table-fp8e5m2.txt "$OUT"/rc.txt; grep -h "error" "$OUT"/*.err | head
