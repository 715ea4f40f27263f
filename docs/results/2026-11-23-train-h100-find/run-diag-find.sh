#!/bin/bash
# Fresh processes, each printing cuDNN Find's list and the re-timed candidates (DIAG_FIND).
set -u
B=.gpu-bundle; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
export DIAG_FIND=1
source scripts/timed-runs.sh
runs_begin diag ${BUDGET:-300}
for i in $(seq ${N:-6}); do
  for pb in ${PRECS:-bf16:256 tf32:128}; do
    p=${pb%:*}; b=${pb#*:}
    timed_run r${i}_$p 120 $E mpirun -np 1 -x DIAG_FIND scalebench-run-diag train -p precision=$p -p batch=$b -p warmup=5 -p steps=5 --repetitions 3 --emit records
  done
done
