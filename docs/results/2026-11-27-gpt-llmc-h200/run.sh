#!/bin/bash
# One GPU, GPT-2 in the same call as its peers: scalebench's gpt step (cuDNN attention), llm.c (built
# from karpathy/llm.c outside this repository, cuDNN attention, its default recompute), PyTorch eager
# and torch.compile (torch_gpt.py, the PyTorch peer of the time). PART=124m: 124M at batch 16 with both PyTorch
# peers, plus the fp64 gradient check and the 10-step loss comparison with PyTorch; PART=1.5b: 1.5B
# at batch 8 against llm.c. Run from the repository root with B = the bundle's env.sh, PEERS = a
# folder with torch_gpt.py (examples/pytorch), OUT = a folder for the logs; the bundle holds llm.c's train_gpt2cu.
B=${B:-.gpu-bundle/env.sh}
PEERS=${PEERS:-.gpt-dev}
PART=${PART:-124m}
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
# llm.c reads tokens from files in its format: 256 int32 header (20240520, 1, count), uint16 tokens.
python3 - "$OUT" <<'PY'
import sys, numpy as np
for name in ("train", "val"):
    n = 4 * 1024 * 1024
    header = np.zeros(256, dtype=np.int32); header[:3] = (20240520, 1, n)
    tok = np.random.default_rng(7).integers(0, 50257, n, dtype=np.uint16)
    with open(f"{sys.argv[1]}/llmc_{name}.bin", "wb") as f:
        f.write(header.tobytes()); f.write(tok.tobytes())
PY
llmc() {  # depth batch steps
  timeout 240 $B train_gpt2cu -i "$OUT/llmc_train.bin" -j "$OUT/llmc_val.bin" -e "$1" -b "$2" -t 1024 \
    -x "$3" -v 100000 -s 0 -h 0 -o "$OUT/llmc-$1" 2>&1 | grep -E "^step|num_parameters|device|memory" | tail -n 8
  echo "rc=${PIPESTATUS[0]}"
}
ours() {  # model batch samples steps
  timeout 200 $B scalebench-gpt-check time "$1" "$2" 1024 1 "$3" "$4" cudnn; echo "rc=$?"
}
if [[ $PART == 124m ]]; then
  echo "== gradcheck (cudnn)"; timeout 120 $B scalebench-gpt-check gradcheck; echo "rc=$?"
  echo "== PyTorch loss comparison, 10 steps, gpt2-tiny"
  timeout 120 $B scalebench-gpt-check dump "$OUT/dump" gpt2-tiny 4 64 && \
    timeout 120 python3 tests/gpt/compare_torch.py "$OUT/dump" --peer "$PEERS/torch_gpt.py"; echo "rc=$?"
  echo "== ours 124M bs16"; ours gpt2-124m 16 5 10
  echo "== llm.c 124M bs16"; llmc d12 16 40
  echo "== torch eager 124M bs16"; timeout 150 python3 "$PEERS/torch_gpt.py" --model gpt2-124m --batch 16 --seq 1024; echo "rc=$?"
  echo "== torch.compile 124M bs16"; timeout 240 python3 "$PEERS/torch_gpt.py" --model gpt2-124m --batch 16 --seq 1024 --compile; echo "rc=$?"
  echo "== ours 124M bs16 again"; ours gpt2-124m 16 5 10
else
  echo "== ours 1.5B bs8"; ours gpt2-1558m 8 3 5
  echo "== llm.c 1.5B bs8"; llmc d48 8 25
  echo "== ours 1.5B bs8 again"; ours gpt2-1558m 8 3 5
fi
