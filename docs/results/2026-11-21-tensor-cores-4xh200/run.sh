#!/bin/bash
# The Tensor Core study (examples/tensor-cores.yaml) on the GPU machine, with the PyTorch peers
# (torch.matmul, torch.nn.LSTM) measured in the same call, before and after. From the repository
# root: B=BUNDLE PEERS=DIR docs/results/2026-11-21-tensor-cores-4xh200/run.sh OUT
# BUNDLE holds bin/{scalebench,scalebench-coordinator,scalebench-agent,scalebench-run} and env.sh;
# PEERS holds gemm_peer.py and lstm_peer.py (copies are in docs/results/2026-11-21-{gemm,rnn}-h200/).
set -u
OUT=${1:?output folder}
B=${B:?bundle folder}
PEERS=${PEERS:?peer scripts folder}
mkdir -p "$OUT"
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv; } > "$OUT/machine.txt" 2>&1
# PyTorch brings its own cuDNN: the peers run outside env.sh.
timeout 40 python3 "$PEERS/gemm_peer.py" 8192x8192x8192 > "$OUT/peer-gemm-before.json" 2> "$OUT/peer-errors.txt"
timeout 60 python3 "$PEERS/lstm_peer.py" > "$OUT/peer-lstm-before.json" 2>> "$OUT/peer-errors.txt"
start=$(date +%s)
timeout 380 "$B/env.sh" scalebench study examples/tensor-cores.yaml --db "$OUT/tc.db" --logs "$OUT/logs" > "$OUT/study.txt" 2>&1
echo "study rc=$? in $(( $(date +%s) - start )) s" >> "$OUT/study.txt"
timeout 40 python3 "$PEERS/gemm_peer.py" 8192x8192x8192 > "$OUT/peer-gemm-after.json" 2>> "$OUT/peer-errors.txt"
"$B/env.sh" scalebench results --db "$OUT/tc.db" --format json > "$OUT/records.jsonl" 2>> "$OUT/peer-errors.txt"
"$B/env.sh" scalebench report --db "$OUT/tc.db" --out "$OUT/report" > "$OUT/report.txt" 2>&1
