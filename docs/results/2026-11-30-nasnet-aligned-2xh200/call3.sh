#!/bin/bash
# Call 3 on 2 x H200: the depthwise kernels taking runs of four neighbouring outputs a thread
# (forward, the data gradient at stride 1 as a mirrored forward pass, the filter gradient),
# against call 2's kernels (scalebench-run-old: 79a2a0d), in the same call. GPU 1: the compiled
# PyTorch NASNet peer, fp16 batch 512 (compiling on the CPU from the call's start). GPU 0
# meanwhile: the depthwise, train and infer GPU tests; NASNet fp16 b512 before and after,
# alternating; fp32 b256 both; fp32 dumps against the float64 reference and NASNet's against the
# peer; then the peer in fp32 b256 on GPU 0. Run from the repository root with B = the bundle's
# env.sh and $OUT set; everything lands in $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv > "$OUT/raw/gpu.txt"
left() { echo $((570 - SECONDS)); }
peer() {  # gpu precision batch timeout
  local t0=$SECONDS
  CUDA_VISIBLE_DEVICES=$1 timeout $4 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision $2 \
    --batch $3 --steps 20 --warmup 5 --compile model > "$OUT/raw/torch-compiled-$2.txt" 2>&1
  echo "torch compiled $2 b$3 rc=$? in $((SECONDS - t0)) s (ended at $SECONDS s)"
}
peer 1 fp16 512 420 &
export CUDA_VISIBLE_DEVICES=0
start=$SECONDS
timeout 150 $B scalebench-unit-tests --gtest_filter='DepthwiseGpu.*:TrainGpu.*:InferGpu.*' > "$OUT/raw/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is|what\(\)|Value of|Actual|y at|dx at|dw at" "$OUT/raw/unit.txt" | head -30
ours() {  # tag program model precision batch [params...]
  local t0=$SECONDS
  timeout 90 $B mpirun -np 1 $2 train -p model=$3 -p precision=$4 -p batch=$5 -p warmup=5 -p steps=5 \
    "${@:6}" --repetitions 3 --emit records > "$OUT/raw/ours-$1.jsonl" 2> "$OUT/raw/ours-$1.err"
  echo "$1 rc=$? in $((SECONDS - t0)) s"
}
ours nasnet-fp16-before-1 scalebench-run-old nasnet fp16 512
ours nasnet-fp16-after-1 scalebench-run nasnet fp16 512
ours nasnet-fp16-before-2 scalebench-run-old nasnet fp16 512
ours nasnet-fp16-after-2 scalebench-run nasnet fp16 512
ours nasnet-fp32-before scalebench-run-old nasnet fp32 256
ours nasnet-fp32-after scalebench-run nasnet fp32 256
python3 - "$OUT"/raw/ours-nasnet-*.jsonl <<'PY'
import json, sys
for path in sys.argv[1:]:
    for line in open(path):
        i = line.find("{")
        if i < 0: continue
        r = json.loads(line[i:])
        if r.get("metric") != "throughput":
            if r.get("status") != "ok": print(path.split("/")[-1], r.get("status"), str(r.get("reason"))[:300])
            continue
        d, st = r.get("details") or {}, r.get("stats") or {}
        prof = (d.get("profile") or {}).get("by_op_ms", {})
        top = sorted(prof.items(), key=lambda kv: -kv[1])[:6]
        print(path.split("/")[-1], "median %.2f img/s cv %.4f n %s" % (st.get("median", 0), st.get("cv", 0), st.get("n")),
              "step %.1f ms" % d.get("step_ms", 0), "depthwise_kernels", d.get("depthwise_kernels"),
              "check", (r.get("correctness") or {}).get("passed"),
              "gradcheck wrong", (d.get("gradient_check") or {}).get("wrong"), "max", (d.get("gradient_check") or {}).get("max_rel_error"))
        print("   ", ", ".join("%s %.1f" % kv for kv in top), "| slowest", [(x["layer"], round(x["ms"], 2)) for x in (d.get("profile") or {}).get("slowest_layers", [])[:4]])
PY
dump() {  # tag model batch
  local t0=$SECONDS dir="$OUT/raw/dump-$1"
  timeout 60 $B mpirun -np 1 scalebench-run train -p model=$2 -p precision=fp32 -p batch=$3 -p dump="$dir" \
    -p dump_steps=3 -p warmup=1 -p steps=1 --repetitions 3 --emit records \
    > "$OUT/raw/same-$1.jsonl" 2> "$OUT/raw/same-$1.err"
  echo "dump $1 rc=$? in $((SECONDS - t0)) s"
}
dump tiny-nasnet tiny-nasnet 8
dump nasnet nasnet 32
timeout 60 python3 scripts/reference-gradients.py "$OUT/raw/dump-tiny-nasnet/fp32-b8" > "$OUT/raw/reference-tiny-nasnet.txt" 2>&1
echo "reference tiny-nasnet rc=$?: $(head -1 "$OUT/raw/reference-tiny-nasnet.txt")"; tail -1 "$OUT/raw/reference-tiny-nasnet.txt"
timeout 90 python3 examples/pytorch/nasnet_mobile.py --check "$OUT/raw/dump-nasnet/fp32-b32" > "$OUT/raw/check-nasnet.txt" 2>&1
echo "peer check nasnet rc=$?"; grep -E "median relative|^step|^(PASS|FAIL)" "$OUT/raw/check-nasnet.txt"
echo "GPU 0 done at $SECONDS s"
[ "$(left)" -gt 200 ] && { peer 0 fp32 256 $(( $(left) < 380 ? $(left) : 380 )) & }
wait
for p in fp16 fp32; do echo "-- peer $p"; grep -E "^(setup|images/s|step_ms|warmup_s|final loss)" "$OUT/raw/torch-compiled-$p.txt" 2>/dev/null | sed 's/^/  /'; done
find "$OUT/raw" -name '*.f32' -size +1M -delete; find "$OUT/raw" -name 'images.bin' -size +1M -delete
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
