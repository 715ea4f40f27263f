#!/bin/bash
# Call 3 on 2 x H200, the session's last long call, three pieces of work at once where they share
# no GPU. Phase A, side by side: GPU 1 runs the infer workload's first GPU run
# (docs/results/2026-11-30-infer-h200/run.sh, its GPU tests and ResNet-50 fp16 under MLPerf's four
# scenarios); GPU 0 runs NASNet: the compiled PyTorch peer at fp16 batch 512 and, while it compiles
# (~265 s on the CPU, the GPU idle), scalebench's fp16 batch 512 training (its fc fixed since
# call 2) and the same-weights comparisons with the gradients of a pass alone (grads0)
# beside the first step's (grads1). Phase B, both GPUs: the interleaved pipeline schedule's first
# run (docs/results/2026-11-30-vstages-2xh200/run.sh), then NASNet's fp16 row at 2 GPUs. Run from
# the repository root with B = the bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
export B
mkdir -p "$OUT/raw" "$OUT/infer" "$OUT/vstages"
echo "== phase A"
(CUDA_VISIBLE_DEVICES=1 OUT="$OUT/infer" deadline=290 bash docs/results/2026-11-30-infer-h200/run.sh > "$OUT/infer/console.txt" 2>&1) &
infer=$!
export CUDA_VISIBLE_DEVICES=0
# The peer starts first: its ~265 s of compiling are CPU work (32 cores here), while scalebench's
# run, a CUDA graph a step, and the same-weights checks use the GPU; its timed steps come after.
start=$SECONDS
(timeout 300 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 --batch 512 --steps 20 \
  --warmup 5 --compile model > "$OUT/raw/torch-compiled.txt" 2>&1; echo "torch compiled rc=$? in $((SECONDS - start)) s") &
peer=$!
timeout 60 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=fp16 -p batch=512 -p warmup=5 -p steps=5 \
  --repetitions 5 --emit records > "$OUT/raw/ours-fp16.jsonl" 2> "$OUT/raw/ours-fp16.err"
echo "nasnet fp16 b512 scalebench rc=$? in $((SECONDS - start)) s"
same() {  # tag model precision batch [params...]
  local start=$SECONDS dir="$OUT/raw/dump-$1"
  timeout 60 $B mpirun -np 1 scalebench-run train -p model=$2 -p precision=$3 -p batch=$4 -p dump="$dir" \
    -p dump_steps=5 "${@:5}" -p warmup=1 -p steps=1 --repetitions 3 --emit records \
    >> "$OUT/raw/same-$1.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "dump $1 rc=$? in $((SECONDS - start)) s"
  timeout 60 python3 examples/pytorch/nasnet_mobile.py --check "$dir/$3-b$4" > "$OUT/raw/check-$1.txt" 2>&1
  grep -v "^  " "$OUT/raw/check-$1.txt" | head -3; grep -A3 "grads[01].f32" "$OUT/raw/check-$1.txt" | head -10
  grep -E "^(PASS|FAIL)" "$OUT/raw/check-$1.txt"
}
same tiny tiny-nasnet fp32 8 -p algo=heuristic
same nasnet-fp32 nasnet fp32 32 -p algo=heuristic
same nasnet-fp16 nasnet fp16 64
wait $peer
grep -E "^(images/s|step_ms|setup|warmup_s)" "$OUT/raw/torch-compiled.txt" | sed 's/^/  /'
python3 "$D/summarise.py" "$OUT/raw/ours-fp16.jsonl" "$OUT"/raw/same-*.jsonl
wait $infer
echo "infer rc=$? ($SECONDS s into the call)"; cat "$OUT/infer/console.txt"
echo "== phase B ($SECONDS s)"
unset CUDA_VISIBLE_DEVICES
OUT="$OUT/vstages" bash docs/results/2026-11-30-vstages-2xh200/run.sh > "$OUT/vstages/console.txt" 2>&1
echo "vstages rc=$? ($SECONDS s into the call)"; cat "$OUT/vstages/console.txt"
left=$((575 - SECONDS))
if ((left > 60)); then
  timeout $left $B scalebench study "$D/nasnet-fp16-table.yaml" --db "$OUT/raw/study.db" > "$OUT/raw/study.txt" 2>&1
  echo "study rc=$? ($SECONDS s into the call)"; grep -E "^\[[0-9]" "$OUT/raw/study.txt" | cut -c1-200
  $B scalebench report --db "$OUT/raw/study.db" --out "$OUT/raw/report" > /dev/null 2>&1
  sed -n '/Training table/,/^$/p' "$OUT/raw/report/report.md" | head -12
fi
for d in raw infer vstages; do
  [[ -d "$OUT/$d" ]] && tar -C "$OUT" -czf "$OUT/$d-raw.tar.gz" --exclude='weights.f32' --exclude='images.bin' \
    --exclude='labels.i32' --exclude='grads?.f32' "$d" && rm -rf "$OUT/$d"
done
