#!/bin/bash
# The rnn workload and the torch.nn.LSTM peer, side by side on one GPU (peer before and after).
# As run: this file sat in the bundle folder (bin/scalebench-run, env.sh) beside .peers-torch/lstm_peer.py;
# $OUT is the folder the results go to.
B=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$B")"
run() { timeout "$1" $B/env.sh mpirun -np 1 scalebench-run rnn "${@:2}"; }
timeout 40 python3 .peers-torch/lstm_peer.py > $OUT/peer1.json 2>> $OUT/errs.txt; echo "peer1 rc=$?"
for g in false true; do for p in fp32 tf32 fp16; do
  run 40 -p cell=lstm -p mode=training -p precision=$p -p cuda_graph=$g -p hidden=128,256,512,1024 \
    --repetitions 30 --emit records >> $OUT/lstm.jsonl 2>> $OUT/errs.txt
  echo "lstm training $p graph=$g rc=$?"
done; done
timeout 40 python3 .peers-torch/lstm_peer.py > $OUT/peer2.json 2>> $OUT/errs.txt; echo "peer2 rc=$?"
for cp in rnn_relu:fp16 rnn_relu:fp32 gru:fp32 lstm:fp32; do c=${cp%:*}; p=${cp#*:}; {
  run 20 -p cell=$c -p mode=training -p layers=2 -p bidirectional=true -p precision=$p -p hidden=256,1024 \
    -p time_cap=0.2 --repetitions 10 --emit records >> $OUT/cells.jsonl 2>> $OUT/errs.txt
  echo "$c $p rc=$?"
}; done
run 20 -p cell=lstm -p precision=fp16 -p time_cap=0.2 2>&1 | tee $OUT/table.txt
