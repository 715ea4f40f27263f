#!/bin/bash
# call 5 (one H200): the cross-entropy with its row in shared memory (ce), and the MLP-up bias gradient
# in the DGELU epilogue (full = ce + that), against the code before (base); then the peers.
# B: a bundle with this build's scalebench-unit-tests and three scalebench-gpt-check builds (-base: this folder's final code, -ce, -full) and llm.c's train_gpt2cu; PEERS: a folder with torch_gpt.py (examples/pytorch)
B=${B:-.gpu-bundle/env.sh}; PEERS=${PEERS:-.gpt-dev}
L=$OUT/logs; mkdir -p $L; trap "tar czf $OUT/logs.tgz -C $L . && rm -rf $L" EXIT
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
echo "== GPU tests (full)"
timeout 150 $B scalebench-unit-tests --gtest_filter='GptGpu*:GptRecomputeGpu*:GptGpuTp*:GptTextGpu*' > $L/tests.log 2>&1; echo "rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|Failure" $L/tests.log | head -20
echo "== PyTorch loss comparison, 10 steps, gpt2-tiny (full)"
timeout 60 $B scalebench-gpt-check-full dump "$L/dump" gpt2-tiny 4 64 > $L/dump.log 2>&1 && timeout 120 python3 tests/gpt/compare_torch.py "$L/dump" --peer $PEERS/torch_gpt.py 2>&1 | tail -2; echo "rc=$?"; rm -rf $L/dump
t() { tag=$1; shift; timeout 120 $B "$@" > $L/$tag.json 2>&1; echo "$tag rc=$? $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['profile']
print(round(d['tokens_per_s']), round(d['mfu_pct'],2), round(d['step_ms_median'],2), 'ce', round(p['fwd.cross_entropy']['ms'],3), 'bwd.gemm_mlp', round(p['bwd.gemm_mlp']['ms'],3))" $L/$tag.json 2>&1 | tail -1)"; }
echo "== 124M bs16: base, ce, full x2"
for r in a b; do for v in base ce full; do t 124m-$v-$r scalebench-gpt-check-$v time gpt2-124m 16 1024 1 5 10 cudnn; done; done
echo "== 1.5B bs8: base, full"
t 1.5b-base scalebench-gpt-check-base time gpt2-1558m 8 1024 1 3 5 cudnn
t 1.5b-full scalebench-gpt-check-full time gpt2-1558m 8 1024 1 3 5 cudnn
python3 - "$OUT" <<'PY'
import sys, numpy as np
for name in ("train", "val"):
    n = 4 * 1024 * 1024
    header = np.zeros(256, dtype=np.int32); header[:3] = (20240520, 1, n)
    tok = np.random.default_rng(7).integers(0, 50257, n, dtype=np.uint16)
    with open(f"{sys.argv[1]}/llmc_{name}.bin", "wb") as f:
        f.write(header.tobytes()); f.write(tok.tobytes())
PY
llmc() { timeout 200 $B train_gpt2cu -i "$OUT/llmc_train.bin" -j "$OUT/llmc_val.bin" -e "$1" -b "$2" -t 1024 -x "$3" -v 100000 -s 0 -h 0 -o "$L/llmc-$1" > $L/llmc-$1.log 2>&1; echo "llmc $1 rc=$?"; grep -E "^step" $L/llmc-$1.log | tail -n 8 | awk '{print $(NF-1)}' | tr '\n' ' '; echo; }
echo "== llm.c 124M bs16"; llmc d12 16 40
echo "== torch.compile 124M bs16"; timeout 200 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 --compile > $L/torch-compile-124m.log 2>&1; echo "rc=$?"; tail -1 $L/torch-compile-124m.log
echo "== torch eager 124M bs16"; timeout 100 python3 $PEERS/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 > $L/torch-eager-124m.log 2>&1; echo "rc=$?"; tail -1 $L/torch-eager-124m.log
t 124m-full-c scalebench-gpt-check-full time gpt2-124m 16 1024 1 5 10 cudnn
echo "== llm.c 1.5B bs8"; llmc d48 8 25
t 1.5b-full-b scalebench-gpt-check-full time gpt2-1558m 8 1024 1 3 5 cudnn
rm -f $OUT/llmc_*.bin
