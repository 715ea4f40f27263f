#!/bin/bash
# Call 5 on one H200, after the session's last regression study (call 4), with the same programs
# (c63b2f8; their gpt code is c3b73de's): check 1 again for the final FP8 code (GELU' a kernel
# again): 300 steps of GPT-2 124M-shaped on the fortunes, seq 512, batch 16, seed 1234, bf16 and
# fp8; the bundle carries a copy of /usr/share/games/fortunes (Debian's package) as
# .gpu-bundle/fortunes. Run from the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
for p in bf16 fp8; do
  start=$SECONDS
  timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-124m -p data=.gpu-bundle/fortunes -p seq=512 \
    -p micro_batch=16 -p train_steps=300 -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 \
    -p precision=$p --emit records > "$RAW/text-$p.jsonl" 2>> "$RAW/errs.txt"
  echo "text $p rc=$? in $((SECONDS - start)) s"
done
python3 docs/results/2026-11-29-gpt-fp8-h200/summarise.py "$RAW"/text-*.jsonl | cut -c1-400
tail -n 4 "$RAW/errs.txt"
tar -C "$OUT" -czf "$OUT/call5-raw.tar.gz" raw && rm -rf "$OUT/raw"
