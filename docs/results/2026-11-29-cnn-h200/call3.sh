#!/bin/bash
# Call 3 on one H200: VGG-16 after its ReLUs were vectorised and each conv's bias
# joined the ReLU after it (one pass each way instead of two), beside PyTorch eager in the same call;
# the kernels' unit tests against a host reference; ResNet-152 fp16 once more (its ReLUs are in the
# batch norms: it should not move). The closing regression study is call 4 (the unit tests' program
# and the data set it needs do not travel together). Run from the repository root: B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 &
dmon=$!
run() { timeout "$1" $B mpirun -np 1 scalebench-run "${@:2}"; }
summary() {
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    i = line.find("{")
    if i < 0: continue
    try: r = json.loads(line[i:])
    except ValueError: continue
    st, d = r.get("stats") or {}, r.get("details") or {}
    print(r.get("params", {}).get("model"), json.dumps(r.get("point")), r.get("metric"), r.get("unit"),
          "median", st.get("median"), "cv", round(st.get("cv") or 0, 4), "n", st.get("n"),
          "correct", (r.get("correctness") or {}).get("passed"), r.get("status"), r.get("reason"),
          "bias_relu_fused", d.get("bias_relu_fused"), "by_op_ms", json.dumps((d.get("profile") or {}).get("by_op_ms")))
PY
}

echo "== unit tests of the train kernels"
timeout 120 $B scalebench-unit-tests --gtest_filter='TrainGpu.*' > "$OUT/raw/unit.txt" 2>&1; echo "unit rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]" "$OUT/raw/unit.txt"

echo "== vgg16, ours"
for pb in fp16:512 bf16:256; do
  start=$SECONDS
  run 120 train -p model=vgg16 -p precision=${pb%:*} -p batch=${pb#*:} --emit records \
    >> "$OUT/raw/vgg16.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "vgg16 $pb rc=$? in $((SECONDS - start)) s"
done
summary "$OUT/raw/vgg16.jsonl"
echo "== vgg16, PyTorch eager"
for pb in fp16:512 bf16:256; do
  timeout 90 python3 examples/pytorch/ddp_train.py --model vgg16 --precision ${pb%:*} --batch ${pb#*:} --steps 20 --compile none \
    > "$OUT/raw/torch-eager-${pb%:*}.txt" 2>&1; echo "eager $pb rc=$?"; grep -E "images/s:|step_ms" "$OUT/raw/torch-eager-${pb%:*}.txt"
done
echo "== resnet152 fp16 b512, ours"
run 120 train -p model=resnet152 -p precision=fp16 -p batch=512 --emit records >> "$OUT/raw/resnet152.jsonl" 2>> "$OUT/raw/errs.txt"
echo "resnet152 rc=$?"; summary "$OUT/raw/resnet152.jsonl"

kill $dmon
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
