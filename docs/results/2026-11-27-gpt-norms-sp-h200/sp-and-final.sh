#!/bin/bash
# call 4 (2 GPUs): sequence_parallel GPU tests and 2-GPU equivalence; then the final one-GPU figures with the peers
# B: a bundle of this build (env.sh puts its programs and libraries first); PEERS: a folder with torch_gpt.py (examples/pytorch)
B=${B:-.gpu-bundle/env.sh}; PEERS=${PEERS:-.gpt-dev}; HERE=$(dirname "$0")
L=$OUT/logs; mkdir -p $L; trap "tar czf $OUT/logs.tgz -C $L . && rm -rf $L" EXIT
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
nvidia-smi topo -m | head -4
echo "== GPU tests"
CUDA_VISIBLE_DEVICES=0 timeout 200 $B scalebench-unit-tests --gtest_filter='GptGpuTp.*:GptGpu.*:GptRecomputeGpu.*:GptTextGpu*' > $L/tests.log 2>&1; echo "rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|Failure" $L/tests.log | head -20
echo "== SP equivalence"
R="mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0"
C="-p warmup=2 -p steps=2 --repetitions 1 --format json"
run() { name=$1; np=$2; shift 2; timeout 120 $B $R -np $np scalebench-run gpt $C "$@" > $L/$name.json 2> $L/$name.err || { echo "$name rc=$?"; tail -5 $L/$name.err; }; }
G="-p model=gpt2-124m -p seq=1024 -p micro_batch=8"
run g1_tp1 1 $G
run g2_tp2 2 $G -p tp=2
run g3_tp2_sp 2 $G -p tp=2 -p sequence_parallel=true
run g4_tp2_sp_rc 2 $G -p tp=2 -p sequence_parallel=true -p recompute=true
run g5_tp2_sp_acc 2 $G -p tp=2 -p sequence_parallel=true -p micro_batch=4 -p grad_accum=2
run g6_tp1_acc 1 $G -p micro_batch=4 -p grad_accum=2
M="-p model=llama3-8b -p layers=2 -p seq=1024 -p micro_batch=2"
run l1_tp1 1 $M
run l2_tp2_sp 2 $M -p tp=2 -p sequence_parallel=true
run l3_tp2_sp_rc 2 $M -p tp=2 -p sequence_parallel=true -p recompute=true
C="-p warmup=3 -p steps=5 --repetitions 3 --format json"
T="-p model=gpt2-350m -p seq=1024 -p micro_batch=16"
run t1_350m_tp2 2 $T -p tp=2
run t2_350m_tp2_sp 2 $T -p tp=2 -p sequence_parallel=true
python3 $HERE/../2026-11-27-gpt-parallel-h200/summ.py $L/*.json
echo "== final one-GPU figures with the peers (GPU 0)"
export CUDA_VISIBLE_DEVICES=0
t() { tag=$1; shift; timeout 200 $B "$@" > $L/$tag.json 2>&1; echo "$tag rc=$? $(python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(round(d['tokens_per_s']),round(d['mfu_pct'],2),round(d['step_ms_median'],2),round(d['device_used_gib'],2))" $L/$tag.json 2>&1 | tail -1)"; }
python3 - "$OUT" <<'PY'
import sys, numpy as np
for name in ("train", "val"):
    n = 4 * 1024 * 1024
    header = np.zeros(256, dtype=np.int32); header[:3] = (20240520, 1, n)
    tok = np.random.default_rng(7).integers(0, 50257, n, dtype=np.uint16)
    with open(f"{sys.argv[1]}/llmc_{name}.bin", "wb") as f:
        f.write(header.tobytes()); f.write(tok.tobytes())
PY
llmc() { timeout 240 $B train_gpt2cu -i "$OUT/llmc_train.bin" -j "$OUT/llmc_val.bin" -e "$1" -b "$2" -t 1024 -x "$3" -v 100000 -s 0 -h 0 -o "$L/llmc-$1" > $L/llmc-$1.log 2>&1; echo "llmc $1 rc=$?"; grep -E "^step" $L/llmc-$1.log | tail -n 8 | awk '{print $(NF-1)}' | tr '\n' ' '; echo; }
t 124m-a scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn
echo "== llm.c 124M bs16"; llmc d12 16 40
echo "== torch.compile 124M bs16"; timeout 240 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 --compile > $L/torch-compile-124m.log 2>&1; echo "rc=$?"; tail -1 $L/torch-compile-124m.log
echo "== torch eager 124M bs16"; timeout 150 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 > $L/torch-eager-124m.log 2>&1; echo "rc=$?"; tail -1 $L/torch-eager-124m.log
t 124m-b scalebench-gpt-check time gpt2-124m 16 1024 1 5 10 cudnn
t 1.5b-a scalebench-gpt-check time gpt2-1558m 8 1024 1 3 5 cudnn
echo "== llm.c 1.5B bs8"; llmc d48 8 25
t 1.5b-b scalebench-gpt-check time gpt2-1558m 8 1024 1 3 5 cudnn
rm -f $OUT/llmc_*.bin
