#!/bin/bash
# Call 1b on one H200, right after 1a on the same machine (1a's bundle and the data set do not
# fit one call's carry), with scalebench-run rebuilt: the candidates of `algo: auto` (rnn) and
# `algo: search` (gemm) now timed in alternating rounds (compute::time_candidates).
#  - LSTM fp16 h1024's two speeds of cuDNN's standard algorithm (1.02 or 1.3-1.4 ms a step): fresh
#    processes with the algorithm forced, four points in one process, and with the weights held
#    in L2 (l2_persist);
#  - GEMM 8192^3 fp16/bf16 with the new search, torch.matmul on the same kind of data beside it;
#  - time to accuracy: scalebench and the rewritten PyTorch peer (whole step as one CUDA graph).
# Run from the repository root: B = the bundle's env.sh, DATA = the Fashion-MNIST .gz folder.
B=${B:-.gpu-bundle/env.sh}
DATA=${DATA:-.gpu-bundle/fmnist}
R=docs/results/2026-11-29-guard-h200
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi dmon -s pc -d 1 > "$OUT/raw/dmon.txt" 2>&1 &
dmon=$!
run() { timeout "$1" $B mpirun -np 1 scalebench-run "${@:2}"; }
rnn() { run 60 rnn -p cell=lstm -p mode=training -p precision=fp16 --emit records "$@" >> "$OUT/raw/lstm.jsonl" 2>> "$OUT/raw/errs.txt"; echo "rnn $* rc=$?"; }

echo "== LSTM fp16 h1024"
for i in 1 2 3 4; do rnn -p hidden=1024 -p algo=standard -p check=false; done
rnn -p hidden=1024,1024,1024,1024 -p algo=standard -p check=false
for i in 1 2 3 4; do rnn -p hidden=1024 -p algo=standard -p check=false -p l2_persist=true; done
rnn -p hidden=1024,1024,1024,1024 -p algo=standard -p check=false -p l2_persist=true
for i in 1 2; do rnn -p hidden=1024; done
rnn -p hidden=256,1024 -p l2_persist=true
timeout 60 python3 examples/pytorch/lstm_train.py --precisions fp16 --hidden 1024 --modes eager,graph > "$OUT/raw/lstm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch lstm rc=$?"

echo "== GEMM 8192^3"
for p in fp16 bf16; do
  run 90 gemm -p precision=$p -p sizes=8192 -p shapes=square -p algo=search --emit records >> "$OUT/raw/gemm.jsonl" 2>> "$OUT/raw/errs.txt"; echo "gemm $p rc=$?"
done
timeout 120 python3 $R/gemm_peer.py > "$OUT/raw/gemm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch gemm rc=$?"

echo "== time to accuracy, 5 seeds to 0.937"
run 120 train -p data="$DATA" -p model=fmnist-resnet -p precision=bf16 -p batch=512 -p weight_decay=5e-4 \
  -p target_accuracy=0.937 -p max_epochs=10 -p seeds=5 > "$OUT/raw/tta.log" 2>&1; echo "tta rc=$?"
timeout 150 python3 examples/pytorch/fmnist_tta.py --data "$DATA" --steps-check 20 --compile-mode default \
  > "$OUT/raw/tta-torch-check.log" 2>&1; echo "torch tta check rc=$?"; tail -n 3 "$OUT/raw/tta-torch-check.log"
timeout 300 python3 examples/pytorch/fmnist_tta.py --data "$DATA" --mode graph --seeds 5 --target 0.937 --max-epochs 10 \
  > "$OUT/raw/tta-torch.log" 2>&1; echo "torch tta rc=$?"
kill $dmon
python3 $R/summarize.py "$OUT/raw" | tee "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
