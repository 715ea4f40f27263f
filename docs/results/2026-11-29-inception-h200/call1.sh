#!/bin/bash
# Call 1 on one H200: the train workload's unit tests (tests/unit/train_model_test.cpp and
# train_gpu_test.cpp, the new Inception ops among them, linked alone as train-unit-tests while the
# whole scalebench-unit-tests binary was still building on 2 busy cores), then
# the first GPU runs of inception3 and inception4 in `train`, training and inference, in every
# precision at least once, short; then torchvision's inception_v3 and our PyTorch inception_v4 in
# eager mode while time is left. Run from the repository root: B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"
run() { timeout "$1" $B mpirun -np 1 scalebench-run "${@:2}"; }
short="-p warmup=5 -p steps=5 --repetitions 5 --emit records"

echo "== unit tests (Train*)"; start=$SECONDS
tests=scalebench-unit-tests; [[ -x .gpu-bundle/bin/$tests ]] || tests=train-unit-tests
timeout 60 $B $tests --gtest_filter='Train*' > "$OUT/raw/unit.txt" 2>&1
echo "unit rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|tests ran" "$OUT/raw/unit.txt"

deadline=270  # the call's 300 s, less the summary and the archive
point() {  # limit, tag, params...: within what is left of the call
  local start=$SECONDS limit=$1 left=$((deadline - SECONDS))
  (( left < limit )) && limit=$left
  (( limit > 10 )) || { echo "$2 ${*:3}: no time left"; return; }
  run "$limit" train "${@:3}" $short >> "$OUT/raw/$2.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "$2 ${*:3} rc=$? in $((SECONDS - start)) s"
}
echo "== inception3 and inception4, 16 bits, training then inference"
point 70 inception3 -p model=inception3 -p precision=fp16,bf16 -p batch=256
point 40 inception3 -p model=inception3 -p mode=inference -p precision=fp16,bf16 -p batch=256
point 70 inception4 -p model=inception4 -p precision=fp16,bf16 -p batch=256
point 40 inception4 -p model=inception4 -p mode=inference -p precision=fp16,bf16 -p batch=256
echo "== inception3, 32 bits (fp32 with cuDNN's heuristic algorithms: its search takes minutes)"
point 45 inception3 -p model=inception3 -p precision=tf32 -p batch=128
point 45 inception3 -p model=inception3 -p precision=fp32 -p batch=128 -p algo=heuristic
python3 - "$OUT"/raw/inception3.jsonl "$OUT"/raw/inception4.jsonl <<'PY'
import json, sys
for f in sys.argv[1:]:
    try: lines = open(f).read().splitlines()
    except OSError: continue
    for line in lines:
        i = line.find("{")
        if i < 0: continue
        try: r = json.loads(line[i:])
        except ValueError: continue
        if r.get("metric") not in ("throughput", None): continue
        st, d = r.get("stats") or {}, r.get("details") or {}
        gc = d.get("gradient_check") or {}
        print(r.get("params", {}).get("model"), r.get("params", {}).get("mode", "train"), json.dumps(r.get("point")),
              r.get("metric"), "median", st.get("median"), "cv", round(st.get("cv") or 0, 4), "n", st.get("n"),
              "step_ms", d.get("step_ms"), "loss", d.get("loss_first"), "->", d.get("loss_last"),
              "gradcheck", gc.get("model"), gc.get("wrong"), "/", gc.get("tensors"), "check", json.dumps(d.get("check")),
              "correct", (r.get("correctness") or {}).get("passed"), r.get("status"), r.get("reason"))
PY
echo "== errors (last lines)"; tail -5 "$OUT/raw/errs.txt" 2>/dev/null
echo "== PyTorch eager, while time is left"
for m in inception_v3:fp16 inception_v4:fp16; do
  left=$((deadline - SECONDS)); (( left > 30 )) || { echo "no time left for $m"; break; }
  timeout $left python3 examples/pytorch/ddp_train.py --model ${m%:*} --precision ${m#*:} --batch 256 --steps 10 --warmup 3 \
    --compile none > "$OUT/raw/torch-eager-${m%:*}.txt" 2>&1; echo "eager $m rc=$?"
  grep -E "images/s:|step_ms|final loss|Error" "$OUT/raw/torch-eager-${m%:*}.txt"
done
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
