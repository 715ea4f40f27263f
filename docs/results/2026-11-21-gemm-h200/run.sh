#!/bin/bash
# Second pass: every precision of the gemm workload beside torch.matmul (before and after), the
# heuristic against the search, a table, and two ranks on one GPU (the all-GPU records' path).
B=${B:?the folder with bin/scalebench-run and env.sh (its library path)}
PEERS=${PEERS:-.}
OUT=${OUT:-/tmp/gemm-out}
L=/tmp/gemm-logs; rm -rf "$L"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv > "$L/gpu.txt" 2>&1
timeout 30 python3 $PEERS/gemm_peer.py 8192x8192x8192 > "$L/torch-before.txt" 2>&1
run() {  # name, then scalebench-run arguments
  local n=$1; shift
  timeout 20 $B/env.sh mpirun -np 1 scalebench-run gemm "$@" --repetitions 10 --emit records > "$L/gemm-$n.jsonl" 2> "$L/gemm-$n.err"
  echo "$n rc=$?" >> "$L/rc.txt"
}
shapes="square,5124x9124x2048,35x8457x4096,7680x5481x2560:nt,3072x1x1024"
for p in bf16 fp16 tf32 fp32 fp64 fp8e4m3 fp8e5m2 int8; do
  run $p -p precision=$p -p sizes=8192 -p shapes=$shapes -p time_cap=0.4
done
for p in bf16 fp16 tf32 fp32; do
  run $p-heuristic -p precision=$p -p sizes=8192 -p algo=heuristic -p time_cap=0.4
done
timeout 30 python3 $PEERS/gemm_peer.py 8192x8192x8192 > "$L/torch-after.txt" 2>&1
timeout 15 $B/env.sh mpirun -np 1 scalebench-run gemm -p precision=int8 -p shapes=deepbench-device -p time_cap=0.2 \
  --repetitions 5 > "$L/table-int8-deepbench-device.txt" 2>&1
timeout 15 $B/env.sh mpirun -np 2 scalebench-run gemm -p precision=bf16 -p sizes=4096 -p time_cap=0.3 \
  --repetitions 10 > "$L/table-bf16-2ranks-1gpu.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> "$L/gpu.txt" 2>&1
python3 $PEERS/summarize.py "$L"/gemm-*.jsonl > "$L/summary.txt" 2>&1
tar czf "$OUT/logs.tar.gz" -C /tmp gemm-logs
grep -h "TFLOP" "$L"/torch-*.txt; cat "$L/summary.txt" "$L/rc.txt" "$L"/table-*.txt "$L/gpu.txt"; grep -h "error" "$L"/*.err | head
