#!/bin/bash
# Call 1 on 2 x H200, the session's start: the GPU regression study on GPU 0 (one point of every
# workload family against the accepted baseline), then what it does not cover of the run-loop
# shell (issue 45: every *_main.cpp now runs on WorkloadRun): copy between the two GPUs, NCCL
# all_reduce across two ranks, and infer's Offline scenario. Fashion-MNIST was unpacked by the
# call before. Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m > "$OUT/raw/topo.txt"
git log -1 --format='tree at %h' 2>/dev/null | tee "$OUT/raw/commit.txt"

echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "regress|unchanged|improved|missing|new|exit|FAIL" "$OUT/raw/gr.txt" | tail -25

run() {  # name timeout args...: one scalebench-run, its records to raw/NAME.jsonl
  local name=$1 t=$2 t0=$SECONDS; shift 2
  timeout "$t" $B mpirun --allow-run-as-root --bind-to none "$@" --format json > "$OUT/raw/$name.jsonl" 2> "$OUT/raw/$name.err"
  echo "$name rc=$? in $((SECONDS - t0)) s"
  python3 - "$OUT/raw/$name.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try: r = json.loads(l)
    except ValueError: continue
    if r.get("metric") in (None, "time"): continue
    st = r.get("stats") or {}
    print(" ", r.get("workload"), json.dumps(r.get("point"), separators=(",", ":"))[:110], r.get("metric"),
          r.get("value"), r.get("unit"), "cv", st.get("cv"), "n", st.get("n"), r.get("status"), (r.get("check") or {}).get("passed"))
PY
}
echo "== copy between the two GPUs (512 MiB, 16 copies a sample, nvbandwidth's loop)"
run copy-ce 60 -np 1 scalebench-run copy -p test=d2d -p engine=ce -p iters=16 --repetitions 10
run copy-sm 60 -np 1 scalebench-run copy -p test=d2d -p engine=sm -p iters=16 --repetitions 10
echo "== NCCL all_reduce, 2 ranks, 1-256 MiB"
run allreduce 90 -np 2 scalebench-run collective -p backend=nccl -p op=all_reduce -p min_bytes=1MiB \
  -p max_bytes=256MiB -p step_factor=4 -p time_cap=0.3 --repetitions 10
echo "== infer Offline, ResNet-50 fp16 (max_batch 256, 3 streams, 10 s)"
CUDA_VISIBLE_DEVICES=1 run infer 90 -np 1 scalebench-run infer -p model=resnet50 -p precision=fp16 -p scenario=offline \
  -p max_batch=256 -p streams=3 -p min_duration_s=10
