#!/bin/bash
# Call 5 on one H200, the same machine right after call 4: ResNet-50 fp16 inference, ours (infer
# Offline at batch 256) and the torch.compile peer at batch 256 (max-autotune; if it has not
# compiled in 300 s, reduce-overhead), one after the other; then the GPU regression study at the
# session's end. Run from the repository root with B = the bundle's env.sh and $OUT set; raw
# output in $OUT/call5-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
echo "== ours: infer Offline, batch 256"; start=$SECONDS
timeout 60 $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json -p model=resnet50 \
  -p precision=fp16 -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 > "$RAW/offline.jsonl" 2>&1
echo "offline rc=$? in $((SECONDS - start)) s"
python3 scripts/record-summary.py --details verdict,samples_per_second,check "$RAW/offline.jsonl" | cut -c1-400
for mode in max-autotune reduce-overhead; do
  echo "== torch.compile peer ($mode), batch 256"; start=$SECONDS
  limit=300; [ $mode = reduce-overhead ] && limit=100
  timeout $limit python3 examples/pytorch/resnet50_infer.py --precision fp16 --batches 256 --mode $mode \
    > "$RAW/peer-$mode.jsonl" 2> "$RAW/peer-$mode.err"
  rc=$?
  echo "peer $mode rc=$rc in $((SECONDS - start)) s"
  cat "$RAW/peer-$mode.jsonl"; grep -v "triton_\|AUTOTUNE\|^ *$" "$RAW/peer-$mode.err" | tail -2
  [ $rc = 0 ] && break
done
echo "== regression study"; start=$SECONDS
timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-12-01-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
tar -C "$OUT" -czf "$OUT/call5-raw.tar.gz" raw && rm -rf "$OUT/raw"
