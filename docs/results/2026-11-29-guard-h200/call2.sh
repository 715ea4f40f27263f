#!/bin/bash
# Call 2 on one H200, the session's last: the regression study as the session's closing run (its
# records become the accepted baseline when they pass), compared with call 1's run; then each
# figure the regression issue asks for beside its PyTorch peer in the same call: LSTM fp16 h1024,
# GEMM 8192^3 fp16/bf16, ResNet-50 bf16 b256 (ours in the study) and GPT-2 124M (ours in the study).
# Run from the repository root: B = the bundle's env.sh; the data set is linked at Debian's path.
B=${B:-.gpu-bundle/env.sh}
R=docs/results/2026-11-29-guard-h200
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 &
dmon=$!
run() { timeout "$1" $B mpirun -np 1 scalebench-run "${@:2}"; }

echo "== regression study, compared with call 1's run"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline .gpu-carry/call1-records.jsonl.gz --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"; grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"

echo "== LSTM fp16 h1024"
for g in false false false true; do
  run 60 rnn -p cell=lstm -p mode=training -p precision=fp16 -p hidden=1024 -p cuda_graph=$g --emit records \
    >> "$OUT/raw/lstm.jsonl" 2>> "$OUT/raw/errs.txt"; echo "rnn graph=$g rc=$?"
done
timeout 60 python3 examples/pytorch/lstm_train.py --precisions fp16 --hidden 1024 --modes eager,graph \
  > "$OUT/raw/lstm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch lstm rc=$?"

echo "== GEMM 8192^3"
for p in fp16 bf16; do
  run 90 gemm -p precision=$p -p sizes=8192 -p shapes=square -p algo=search --emit records >> "$OUT/raw/gemm.jsonl" 2>> "$OUT/raw/errs.txt"; echo "gemm $p rc=$?"
done
timeout 120 python3 $R/gemm_peer.py > "$OUT/raw/gemm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch gemm rc=$?"

echo "== ResNet-50 bf16 b256, PyTorch compiled and eager"
timeout 200 python3 examples/pytorch/ddp_train.py --precision bf16 --batch 256 --steps 30 > "$OUT/raw/resnet-torch-compile.txt" 2>&1; echo "rc=$?"; tail -n 4 "$OUT/raw/resnet-torch-compile.txt"
timeout 60 python3 examples/pytorch/ddp_train.py --precision bf16 --batch 256 --steps 30 --compile none > "$OUT/raw/resnet-torch-eager.txt" 2>&1; echo "rc=$?"; tail -n 2 "$OUT/raw/resnet-torch-eager.txt"

echo "== GPT-2 124M b16, PyTorch compiled"
timeout 150 python3 examples/pytorch/gpt_train.py --model gpt2-124m --batch 16 --seq 1024 --compile > "$OUT/raw/gpt-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "rc=$?"; tail -c 600 "$OUT/raw/gpt-torch.jsonl"

kill $dmon
python3 $R/summarize.py "$OUT/raw" | tee "$OUT/summary.txt"
cp "$OUT/raw/gr/records.jsonl.gz" "$OUT/records.jsonl.gz" 2>/dev/null
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
