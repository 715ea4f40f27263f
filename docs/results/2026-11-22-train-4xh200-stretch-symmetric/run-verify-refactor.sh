#!/bin/bash
# Call 4: after the review that moved the symmetric set-up into SymmetricGradients, one bf16 run on
# 4 GPUs with NVLink and one with NCCL_P2P_DISABLE=1, checks on; prints per rank: GPU, status,
# step ms, all-reduce alone ms, symmetric, symmetric_off, weights identical across ranks.
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
P="-p precision=bf16 -p batch=256 -p warmup=5 -p steps=3 --repetitions 3 --emit records -p check=true"
for v in nvlink pcie; do
  X=""; [ $v = pcie ] && X="-x NCCL_P2P_DISABLE=1"
  timeout 90 $E mpirun -np 4 $X scalebench-run train $P > $OUT/$v.log 2>&1; echo "$v rc=$?"
  grep '^@@SCALEBENCH_RECORD ' $OUT/$v.log | sed 's/^@@SCALEBENCH_RECORD //' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); d=r.get('details',{})
    if r.get('metric')=='time' and 'step_ms' in d: print(r['point'].get('gpu'), r.get('status'), r.get('wrong'), r.get('checked'), round(d['step_ms'],3), round(d['allreduce_alone_ms'],3), d.get('symmetric'), d.get('symmetric_off'), d.get('weights_identical_across_ranks'))"
done
