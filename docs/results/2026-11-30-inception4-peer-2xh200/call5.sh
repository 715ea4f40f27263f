#!/bin/bash
# Call 5 of the session on 2 x H200: Inception v4 against its compiled PyTorch peer
# (examples/pytorch/inception_v4.py, timm's definition, through ddp_train.py), never measured side
# by side before. GPU 1: the peer in fp16 at batch 512 (compiling on the CPU from the call's
# start). GPU 0 meanwhile: scalebench's Inception v4 fp16 b512 (cuDNN's timed search) and fp32
# b256 (cuDNN's heuristic, as examples/tf-cnn-table.yaml runs fp32), then the peer in fp32 b256 on
# GPU 0 for what time is left. Run from the repository root with B = the bundle's env.sh and $OUT
# set; everything lands in $OUT/call5-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv > "$OUT/raw/gpu.txt"
left() { echo $((395 - SECONDS)); }
peer() {  # gpu precision batch timeout
  local t0=$SECONDS
  CUDA_VISIBLE_DEVICES=$1 timeout $4 python3 examples/pytorch/ddp_train.py --model inception_v4 --precision $2 \
    --batch $3 --steps 20 --warmup 5 --compile model > "$OUT/raw/torch-compiled-$2.txt" 2>&1
  echo "torch compiled $2 b$3 rc=$? in $((SECONDS - t0)) s (ended at $SECONDS s)"
}
peer 1 fp16 512 380 &
export CUDA_VISIBLE_DEVICES=0
ours() {  # tag precision batch [params...]
  local t0=$SECONDS
  timeout 120 $B mpirun -np 1 scalebench-run train -p model=inception4 -p precision=$2 -p batch=$3 -p warmup=5 -p steps=5 \
    "${@:4}" --repetitions 3 --emit records > "$OUT/raw/ours-$1.jsonl" 2> "$OUT/raw/ours-$1.err"
  echo "$1 rc=$? in $((SECONDS - t0)) s"
}
ours fp16 fp16 512
ours fp32 fp32 256 -p algo=heuristic
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
              "step %.1f ms" % d.get("step_ms", 0), "check", (r.get("correctness") or {}).get("passed"),
              "gradcheck wrong", (d.get("gradient_check") or {}).get("wrong"))
        print("   ", ", ".join("%s %.1f" % kv for kv in top))
PY
echo "GPU 0 done at $SECONDS s"
[ "$(left)" -gt 150 ] && { peer 0 fp32 256 $(left) & }
wait
for p in fp16 fp32; do echo "-- peer $p"; grep -E "^(setup|images/s|step_ms|warmup_s|final loss)" "$OUT/raw/torch-compiled-$p.txt" 2>/dev/null | sed 's/^/  /'; tail -2 "$OUT/raw/torch-compiled-$p.txt" 2>/dev/null | sed 's/^/  | /'; done
tar -C "$OUT" -czf "$OUT/call5-raw.tar.gz" raw && rm -rf "$OUT/raw"
