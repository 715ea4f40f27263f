#!/bin/bash
# Call 1 on 2 x H200 (the session's first long call). Phase A, side by side:
# - GPU 0: the GPU regression study (the session's start), Fashion-MNIST installed by the call
#   before this one; then the compiled PyTorch NASNet peer's timed steps (fp16, batch 512), whose
#   ~265 s of compiling run on the CPU from the call's start.
# - GPU 1: scalebench's NASNet fp16 batch 512 (its batch norms left unfused where their parameters
#   lie unaligned, never measured), then where its first gradients part from PyTorch's: the
#   tiny-nasnet and nasnet dumps with each convolution path (heuristic, searched with the graph
#   API, legacy only), each compared tensor by tensor in the network's order.
# Phase B, both GPUs: gpt's interleaved pipeline with the rank-balanced virtual stages
# (docs/results/2026-11-30-vstages-2xh200/run.sh). Run from the repository root with B = the
# bundle's env.sh and $OUT set.
B=${B:-.gpu-bundle/env.sh}
D=$(dirname "$0")
export B
mkdir -p "$OUT/raw" "$OUT/vstages"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,driver_version --format=csv > "$OUT/raw/gpu.txt"
ls /usr/share/datasets/fashion-mnist > "$OUT/raw/fmnist-files.txt" 2>&1
echo "== phase A"; start=$SECONDS
(CUDA_VISIBLE_DEVICES=0 timeout 150 $B scripts/gpu-regression.sh \
  --baseline docs/results/2026-11-30-guard-baseline-h200/accepted-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
 echo "gpu-regression rc=$? in $((SECONDS - start)) s") &
guard=$!
(CUDA_VISIBLE_DEVICES=0 timeout 330 python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 \
  --batch 512 --steps 20 --warmup 5 --compile model > "$OUT/raw/torch-compiled.txt" 2>&1
 echo "torch compiled rc=$? in $((SECONDS - start)) s") &
peer=$!
export CUDA_VISIBLE_DEVICES=1
timeout 90 $B mpirun -np 1 scalebench-run train -p model=nasnet -p precision=fp16 -p batch=512 -p warmup=5 -p steps=5 \
  --repetitions 5 --emit records > "$OUT/raw/ours-fp16.jsonl" 2> "$OUT/raw/ours-fp16.err"
echo "nasnet fp16 b512 scalebench rc=$? in $((SECONDS - start)) s"; grep -i "error" "$OUT/raw/ours-fp16.err" | head -3 | cut -c1-300
same() {  # tag model batch [params...]: fp32 dump, then PyTorch from the same weights
  local t0=$SECONDS dir="$OUT/raw/dump-$1"
  timeout 60 $B mpirun -np 1 scalebench-run train -p model=$2 -p precision=fp32 -p batch=$3 -p dump="$dir" \
    -p dump_steps=3 "${@:4}" -p warmup=1 -p steps=1 --repetitions 3 --emit records \
    >> "$OUT/raw/same-$1.jsonl" 2>> "$OUT/raw/errs.txt"
  echo "dump $1 rc=$? in $((SECONDS - t0)) s"
  timeout 60 python3 examples/pytorch/nasnet_mobile.py --check "$dir/fp32-b$3" --every-tensor > "$OUT/raw/check-$1.txt" 2>&1
  grep -E "median relative|^(PASS|FAIL)" "$OUT/raw/check-$1.txt"
}
same tiny-heur tiny-nasnet 8 -p algo=heuristic
same tiny-search tiny-nasnet 8
same tiny-legacy tiny-nasnet 8 -p conv_api=legacy
same tiny-heur-b32 tiny-nasnet 32 -p algo=heuristic
same nasnet-heur nasnet 32 -p algo=heuristic
for t in tiny-heur tiny-search; do echo "-- $t, every tensor"; sed -n '/every tensor/,/median/p' "$OUT/raw/check-$t.txt" | head -60; done
wait $guard
grep -E "REFERENCE FAILED|records are not ok|regress|missing|^gpu-regression" "$OUT/raw/gr.txt" | tail -8
wait $peer
grep -E "^(images/s|step_ms|setup|warmup_s)" "$OUT/raw/torch-compiled.txt" | sed 's/^/  /'
python3 docs/results/2026-11-30-nasnet-2xh200/summarise.py "$OUT/raw/ours-fp16.jsonl"
echo "== phase B ($SECONDS s)"
unset CUDA_VISIBLE_DEVICES
OUT="$OUT/vstages" timeout 200 bash docs/results/2026-11-30-vstages-2xh200/run.sh > "$OUT/vstages/console.txt" 2>&1
echo "vstages rc=$? ($SECONDS s into the call)"; grep -v "^\[ \|^  " "$OUT/vstages/console.txt" | tail -25
find "$OUT" -name '*.f32' -size +1M -delete; find "$OUT" -name 'images.bin' -size +1M -delete
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw vstages && rm -rf "$OUT/raw" "$OUT/vstages"
