#!/bin/bash
# Call 1a on one H200 (the session's first): the regression study as it stands, then what the
# regression issue asks to look at, each peer in the same call:
#  - LSTM fp16 h1024: which algorithm `algo: auto` picks when the point runs alone in a fresh
#    process (three times), each algorithm forced, and torch.nn.LSTM;
#  - GEMM 8192^3 fp16/bf16: the chosen cuBLASLt algorithm with 8 and 32 candidates, against
#    torch.matmul on random and on the workload's own data; power and clocks through the call;
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

if [[ -f examples/gpu-regression.yaml ]]; then
  echo "== regression study"; start=$SECONDS
  timeout 330 $B scalebench study examples/gpu-regression.yaml --db "$OUT/raw/regression.db" > "$OUT/raw/study.txt" 2>&1
  echo "study rc=$? in $((SECONDS - start)) s"; tail -n 40 "$OUT/raw/study.txt"
fi

echo "== LSTM fp16 h1024"
for i in 1 2 3; do rnn -p hidden=1024; done
rnn -p hidden=1024 -p algo=standard
rnn -p hidden=1024 -p algo=persist_static
rnn -p hidden=256,1024
timeout 120 python3 examples/pytorch/lstm_train.py --precisions fp16,fp32 --hidden 256,1024 --modes eager,graph > "$OUT/raw/lstm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch lstm rc=$?"

echo "== GEMM 8192^3"
for p in fp16 bf16; do for c in 8 32; do
  run 90 gemm -p precision=$p -p sizes=8192 -p shapes=square -p algo=search -p candidates=$c --emit records >> "$OUT/raw/gemm.jsonl" 2>> "$OUT/raw/errs.txt"; echo "gemm $p $c rc=$?"
done; done
timeout 120 python3 $R/gemm_peer.py > "$OUT/raw/gemm-torch.jsonl" 2>> "$OUT/raw/errs.txt"; echo "torch gemm rc=$?"

kill $dmon
python3 $R/summarize.py "$OUT/raw" | tee "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
