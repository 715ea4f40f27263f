#!/bin/bash
# Call 7 on one H200: the norms writing their output in FP8 for the QKV and MLP-up GEMMs (this
# change, fdebe35) against the code before it (call 8, the session's last regression study, follows).
#   scalebench-run-a315458  calls 5 and 6's program: the norms write bf16, a kernel casts it into
#                           both FP8 layouts
#   scalebench-run          this change: LayerNorm (GPT-2) and RMSNorm (Llama) write E4M3 and each
#                           row's amax; the transpose for the weight gradient is made from those
#                           bytes (one tp rank and one micro-batch in flight; bf16 as before
#                           otherwise)
# The GPU tests (fp8-gpu-tests, with the new norm test); tokens/s with both programs in turn:
# GPT-2 1.5B batch 8 fp8 (two rounds), 774M batch 12, 350M batch 16, 124M batch 16, and the Llama
# 8B-shaped layers (4 blocks, seq 4096, batch 2), all fp8; bf16 at 1.5B and Llama with this change;
# the fp8 step's phases at 1.5B (scalebench-gpt-check time); check 1 once in each precision (300
# steps on the fortunes, GPT-2 124M-shaped, seq 512, batch 16, seed 1234). Run from the
# repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call7-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"

echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptAdamwGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|Expected|Which is|differ" "$RAW/unit.txt" | head -20

speed() {  # program tag params...
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 "$1" gpt "${@:3}" --emit records > "$RAW/speed-$2.jsonl" 2>> "$RAW/errs.txt"
  echo "$2 rc=$? in $((SECONDS - start)) s"
}
both() {  # tag params...
  speed scalebench-run-a315458 "$1-old" "${@:2}"
  speed scalebench-run "$1-new" "${@:2}"
}
echo "== tokens/s"
both gpt2-1.5b-b8-fp8-r1 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
both gpt2-1.5b-b8-fp8-r2 -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
both gpt2-774m-b12-fp8 -p model=gpt2-774m -p micro_batch=12 -p precision=fp8
both gpt2-350m-b16-fp8 -p model=gpt2-350m -p micro_batch=16 -p precision=fp8
both gpt2-124m-b16-fp8 -p model=gpt2-124m -p micro_batch=16 -p precision=fp8
both llama8b-x4-b2-s4096-fp8 -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=fp8
speed scalebench-run gpt2-1.5b-b8-bf16-new -p model=gpt2-1558m -p micro_batch=8 -p precision=bf16
speed scalebench-run llama8b-x4-b2-s4096-bf16-new -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=bf16
for f in "$RAW"/speed-*.jsonl; do
  python3 - "$f" <<'PY'
import json, sys
f = sys.argv[1]
for line in open(f):
    i = line.find("{")
    if i < 0:
        continue
    try:
        r = json.loads(line[i:])
    except ValueError:
        continue
    if r.get("metric") != "throughput":
        continue
    d, st = r["details"], r["stats"]
    print(f"{f.split('speed-')[-1][:-6]:34s} {st['median']:>9.0f} tokens/s (cv {st.get('cv', 0):.4f}, n {st.get('n')}) "
          f"step {d['step_ms']:.2f} fwd {d['forward_ms']:.2f} bwd {d['backward_ms']:.2f} opt {d['optimizer_ms']:.2f} ms, "
          f"{d['model_bytes'] / 2**30:.2f} GiB, correct {r['correctness'].get('passed')}")
PY
done
tail -n 4 "$RAW/errs.txt"
echo "== phases of the fp8 step, GPT-2 1.5B batch 8"
CUDA_VISIBLE_DEVICES=0 timeout 120 $B scalebench-gpt-check time gpt2-1558m 8 1024 1 10 5 cudnn 0 fp8 > "$RAW/phases-fp8.json" 2>> "$RAW/errs.txt"
echo "phases rc=$?"
python3 - "$RAW/phases-fp8.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
prof = r["profile"]
items = sorted(((k, v["ms"]) for k, v in prof.items() if isinstance(v, dict)), key=lambda x: -x[1])
print(f"{r['precision']}: {r['tokens_per_s']:.0f} tokens/s, step {r['step_ms_median']:.2f} ms; profiled step {prof['total_ms']:.2f} ms:")
print("  " + ", ".join(f"{k} {v:.2f}" for k, v in items))
PY
echo "== check 1 once in each precision"
for p in bf16 fp8; do
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-124m -p data=.gpu-bundle/fortunes \
    -p seq=512 -p micro_batch=16 -p train_steps=300 -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 \
    -p precision=$p --emit records > "$RAW/text-$p.jsonl" 2>> "$RAW/errs.txt"
  echo "text $p rc=$?"
done
python3 docs/results/2026-11-29-gpt-fp8-h200/summarise.py "$RAW"/text-*.jsonl | grep "text:" | sort -u | cut -c1-300
tail -n 4 "$RAW/errs.txt"
tar -C "$OUT" -czf "$OUT/call7-raw.tar.gz" raw && rm -rf "$OUT/raw"
