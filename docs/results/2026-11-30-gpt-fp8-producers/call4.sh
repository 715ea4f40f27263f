#!/bin/bash
# Call 4 on one H200, the session's end with the final programs: the GPU regression study on GPU 0
# (Fashion-MNIST unpacked by the call before), the GPU tests (fp8-gpu-tests, as in call 2), the
# step's phases (scalebench-gpt-check time, now with a PRECISION argument: each phase's share of
# one profiled step, CUDA events between the phases) for GPT-2 1.5B batch 8 in bf16 and fp8, and
# check 1 twice in each precision (300 steps of GPT-2 124M-shaped on the fortunes, seq 512, batch
# 16, seed 1234): how far the same seed's step-300 loss moves from run to run.
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call4-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== regression study"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED" "$RAW/gr.txt" | cut -c1-120 | tail -20
echo "== GPU tests"; start=$SECONDS
CUDA_VISIBLE_DEVICES=0 timeout 150 $B fp8-gpu-tests \
  --gtest_filter='GptFp8*:GptAdamwGpu.*:GptGpu.GradientCheckAgainstFp64:GptGpu.TrainsAndAccumulates:GptGpu.GraphedStepsTrainAsEagerStepsDo:GptRecomputeGpu.*' \
  > "$RAW/unit.txt" 2>&1
echo "GPU tests rc=$? in $((SECONDS - start)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure" "$RAW/unit.txt" | head -20
echo "== phases of a GPT-2 1.5B batch 8 step"
for p in bf16 fp8; do
  CUDA_VISIBLE_DEVICES=0 timeout 120 $B scalebench-gpt-check time gpt2-1558m 8 1024 1 10 5 cudnn 0 $p > "$RAW/phases-$p.json" 2>> "$RAW/errs.txt"
  echo "phases $p rc=$?"
  python3 - "$RAW/phases-$p.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
prof = r["profile"]
items = sorted(((k, v["ms"]) for k, v in prof.items() if isinstance(v, dict)), key=lambda x: -x[1])
print(f"{r['precision']}: {r['tokens_per_s']:.0f} tokens/s, step {r['step_ms_median']:.2f} ms; profiled step {prof['total_ms']:.2f} ms:")
print("  " + ", ".join(f"{k} {v:.2f}" for k, v in items))
PY
done
echo "== check 1 twice in each precision"
for r in 1 2; do
  for p in bf16 fp8; do
    CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-124m -p data=.gpu-bundle/fortunes \
      -p seq=512 -p micro_batch=16 -p train_steps=300 -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 \
      -p precision=$p --emit records > "$RAW/text-$p-$r.jsonl" 2>> "$RAW/errs.txt"
    echo "text $p run $r rc=$?"
  done
done
python3 docs/results/2026-11-29-gpt-fp8-h200/summarise.py "$RAW"/text-*.jsonl | grep "text:" | cut -c1-300
tail -n 4 "$RAW/errs.txt"
tar -C "$OUT" -czf "$OUT/call4-raw.tar.gz" raw && rm -rf "$OUT/raw"
