#!/bin/bash
# Call 3 on 2 x H200: NASNet with our depthwise convolution kernels (depthwise=ours, new) against
# cuDNN's grouped convolutions (depthwise=cudnn), and against the compiled PyTorch peer in the
# same call. GPU 1: the peer in fp16 at batch 512 (compiling on the CPU from the call's start,
# then timing). GPU 0, meanwhile: the GPU tests of the kernels and of tiny-nasnet (and gpt's pp,
# tidied since call 1); scalebench's NASNet fp16 b512 and fp32 b256 both ways; fp32 dumps checked
# against the float64 reference (tiny-inception and tiny-nasnet, searched algorithms: call 2's
# misaligned-address failure) and NASNet's against the peer in NCHW; then the peer in fp32 at
# batch 256 on GPU 0. Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv > "$OUT/raw/gpu.txt"
left() { echo $((575 - SECONDS)); }
peer() {  # gpu precision batch timeout
  local t0=$SECONDS
  CUDA_VISIBLE_DEVICES=$1 timeout $4 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision $2 \
    --batch $3 --steps 20 --warmup 5 --compile model > "$OUT/raw/torch-compiled-$2.txt" 2>&1
  echo "torch compiled $2 b$3 rc=$? in $((SECONDS - t0)) s (ended at $SECONDS s)"
}
peer 1 fp16 512 420 &
fp16peer=$!
export CUDA_VISIBLE_DEVICES=0
start=$SECONDS
timeout 120 $B scalebench-unit-tests --gtest_filter='DepthwiseGpu.*:TrainGpu.TinyNasnet*:TrainGpu.GroupedConvolution*:TrainGpu.*Gradient*:GptGpuPp.*' \
  > "$OUT/raw/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is|what\(\)" "$OUT/raw/unit.txt" | head -30
ours() {  # tag precision batch [params...]
  local t0=$SECONDS
  timeout 90 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=$2 -p batch=$3 -p warmup=5 -p steps=5 \
    "${@:4}" --repetitions 5 --emit records > "$OUT/raw/ours-$1.jsonl" 2> "$OUT/raw/ours-$1.err"
  echo "nasnet $1 rc=$? in $((SECONDS - t0)) s"
}
ours fp16-ours fp16 512 -p depthwise=ours
ours fp16-cudnn fp16 512 -p depthwise=cudnn
ours fp32-ours fp32 256 -p depthwise=ours -p algo=heuristic
ours fp32-ours-search fp32 256 -p depthwise=ours
python3 - "$OUT"/raw/ours-*.jsonl <<'PY'
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
        print("   ", ", ".join("%s %.1f" % kv for kv in top), "| slowest", [(x["layer"], round(x["ms"], 2)) for x in (d.get("profile") or {}).get("slowest_layers", [])[:3]])
PY
dump() {  # tag model batch [params...]
  local t0=$SECONDS dir="$OUT/raw/dump-$1"
  timeout 60 $B mpirun -np 1 scalebench-run train -p model=$2 -p precision=fp32 -p batch=$3 -p dump="$dir" \
    -p dump_steps=3 "${@:4}" -p warmup=1 -p steps=1 --repetitions 3 --emit records \
    > "$OUT/raw/same-$1.jsonl" 2> "$OUT/raw/same-$1.err"
  echo "dump $1 rc=$? in $((SECONDS - t0)) s"
}
dump tiny-inception tiny-inception 8
dump tiny-nasnet tiny-nasnet 8
dump nasnet nasnet 32
for t in tiny-inception tiny-nasnet; do
  timeout 60 python3 scripts/reference-gradients.py "$OUT/raw/dump-$t/fp32-b8" > "$OUT/raw/reference-$t.txt" 2>&1
  echo "reference $t rc=$?: $(head -1 "$OUT/raw/reference-$t.txt")"; tail -1 "$OUT/raw/reference-$t.txt"
done
timeout 90 python3 examples/pytorch/nasnet_mobile.py --check "$OUT/raw/dump-nasnet/fp32-b32" > "$OUT/raw/check-nasnet.txt" 2>&1
echo "peer check nasnet rc=$?"; grep -E "median relative|^step|^(PASS|FAIL)" "$OUT/raw/check-nasnet.txt"
echo "GPU 0 done at $SECONDS s"
peer 0 fp32 256 $(( $(left) < 380 ? $(left) : 380 )) &
fp32peer=$!
wait $fp16peer
wait $fp32peer
for p in fp16 fp32; do echo "-- peer $p"; grep -E "^(images/s|step_ms|setup|warmup_s)" "$OUT/raw/torch-compiled-$p.txt" | sed 's/^/  /'; done
find "$OUT/raw" -name '*.f32' -size +1M -delete; find "$OUT/raw" -name 'images.bin' -size +1M -delete
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
