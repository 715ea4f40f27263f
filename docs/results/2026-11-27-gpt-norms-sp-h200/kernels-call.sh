#!/bin/bash
# call 2: LayerNorm backward rewrite: GPU tests, old/new same call, peers same call, ncu per-kernel profile
# B: a bundle of this build (env.sh puts its programs and libraries first); PEERS: a folder with torch_gpt.py (examples/pytorch)
B=${B:-.gpu-bundle/env.sh}; PEERS=${PEERS:-.gpt-dev}; HERE=$(dirname "$0")
L=$OUT/logs; mkdir -p $L; trap "tar czf $OUT/logs.tgz -C $L . && rm -rf $L" EXIT
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== GPU tests (new)"
timeout 200 $B scalebench-unit-tests --gtest_filter='GptGpu*:GptRecomputeGpu*:GptGpuTp*:GptTextGpu*' > $L/tests.log 2>&1; echo "rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|Failure|Expected|Which is" $L/tests.log | head -20
t() { tag=$1; shift; timeout 200 $B "$@" > $L/$tag.json 2>&1; echo "$tag rc=$? $(python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(round(d['tokens_per_s']),round(d['mfu_pct'],2),round(d.get('step_ms',0),2))" $L/$tag.json 2>&1 | tail -1)"; }
echo "== 124M bs16: old, new, old, new"
t 124m-old-a scalebench-gpt-check-old time gpt2-124m 16 1024 1 5 10 cudnn
t 124m-new-a scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn
t 124m-old-b scalebench-gpt-check-old time gpt2-124m 16 1024 1 5 10 cudnn
t 124m-new-b scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn
echo "== 1.5B bs8: old, new"
t 1.5b-old scalebench-gpt-check-old time gpt2-1558m 8 1024 1 3 5 cudnn
t 1.5b-new scalebench-gpt-check time gpt2-1558m 8 1024 1 3 5 cudnn
grep -h -o '"profile".*' $L/124m-new-a.json $L/1.5b-new.json | cut -c1-1500
python3 - "$OUT" <<'PY'
import sys, numpy as np
for name in ("train", "val"):
    n = 4 * 1024 * 1024
    header = np.zeros(256, dtype=np.int32); header[:3] = (20240520, 1, n)
    tok = np.random.default_rng(7).integers(0, 50257, n, dtype=np.uint16)
    with open(f"{sys.argv[1]}/llmc_{name}.bin", "wb") as f:
        f.write(header.tobytes()); f.write(tok.tobytes())
PY
llmc() { timeout 240 $B train_gpt2cu -i "$OUT/llmc_train.bin" -j "$OUT/llmc_val.bin" -e "$1" -b "$2" -t 1024 -x "$3" -v 100000 -s 0 -h 0 -o "$L/llmc-$1" > $L/llmc-$1.log 2>&1; echo "llmc $1 rc=$?"; grep -E "^step" $L/llmc-$1.log | tail -n 8 | awk '{print $NF, $0}' | cut -c1-160; }
echo "== llm.c 124M bs16"; llmc d12 16 40
echo "== torch.compile 124M bs16"; timeout 240 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 --compile > $L/torch-compile-124m.log 2>&1; echo "rc=$?"; tail -4 $L/torch-compile-124m.log
echo "== torch eager 124M bs16"; timeout 150 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 > $L/torch-eager-124m.log 2>&1; echo "rc=$?"; tail -3 $L/torch-eager-124m.log
t 124m-new-c scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn
echo "== llm.c 1.5B bs8"; llmc d48 8 25
t 1.5b-new-b scalebench-gpt-check time gpt2-1558m 8 1024 1 3 5 cudnn
rm -f $OUT/llmc_*.bin $L/llmc-d*/*.bin 2>/dev/null
echo "== ncu 124M kernels"
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 0 $B scalebench-gpt-check time gpt2-124m 16 1024 1 1 1 cudnn > $L/ncu-124m.csv 2> $L/ncu-124m.err; echo "ncu rc=$?"; wc -l $L/ncu-124m.csv; tail -2 $L/ncu-124m.err
