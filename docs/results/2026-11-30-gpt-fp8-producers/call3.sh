#!/bin/bash
# Call 3 on 2 x H200, the same programs as call 2 (this change, 5e55de3): check 1 for the changed
# FP8 path, and the ratios against our bf16 and the PyTorch FP8 peer, measured in one call.
#   GPU 1, from the start: the PyTorch FP8 peer (examples/pytorch/gpt_train.py --compile
#     --precision fp8) at GPT-2 1.5B batch 8, then at 774M batch 12, each timed once compiled.
#   GPU 0: check 1 (300 steps of GPT-2 124M-shaped on the fortunes, seq 512, batch 16, seed 1234,
#     bf16 and fp8; the bundle carries a copy of /usr/share/games/fortunes, Debian's package, as
#     .gpu-bundle/fortunes), then tokens/s of fp8 and bf16 at GPT-2 1.5B batch 8 (two rounds),
#     774M batch 12, and the Llama 8B-shaped layers (4 blocks, seq 4096, batch 2).
# Run from the repository root with B = the bundle's env.sh and $OUT set; everything lands in
# $OUT/call3-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
PEER=examples/pytorch/gpt_train.py
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$RAW/gpu.txt"
nvidia-smi topo -m > "$RAW/topo.txt" 2>&1

peer() {  # tag model batch precision
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=1 timeout $((570 - SECONDS)) python3 "$PEER" --model "$2" --batch "$3" --seq 1024 --compile \
    --precision "$4" --warmup 3 --steps 5 > "$RAW/peer-$1.json" 2> "$RAW/peer-$1.err"
  echo "peer $1 rc=$? in $((SECONDS - start)) s (at $SECONDS s)" >> "$RAW/peer-status.txt"
}
(peer fp8-1.5b gpt2-1558m 8 fp8; peer fp8-774m gpt2-774m 12 fp8) &
peer_pid=$!

echo "== check 1: 300 steps on the fortunes, GPT-2 124M-shaped, seq 512, batch 16, seed 1234"
for p in bf16 fp8; do
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt -p model=gpt2-124m -p data=.gpu-bundle/fortunes \
    -p seq=512 -p micro_batch=16 -p train_steps=300 -p eval_every=50 -p eval_batches=8 -p lr=6e-4 -p lr_warmup=50 \
    -p precision=$p --emit records > "$RAW/text-$p.jsonl" 2>> "$RAW/errs.txt"
  echo "text $p rc=$? in $((SECONDS - start)) s"
done
python3 docs/results/2026-11-29-gpt-fp8-h200/summarise.py "$RAW"/text-*.jsonl | cut -c1-400

speed() {  # tag params...
  local start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 timeout 90 $B mpirun -np 1 scalebench-run gpt "${@:2}" --emit records > "$RAW/speed-$1.jsonl" 2>> "$RAW/errs.txt"
  echo "$1 rc=$? in $((SECONDS - start)) s"
}
echo "== tokens/s"
for r in r1 r2; do
  speed gpt2-1.5b-b8-fp8-$r -p model=gpt2-1558m -p micro_batch=8 -p precision=fp8
  speed gpt2-1.5b-b8-bf16-$r -p model=gpt2-1558m -p micro_batch=8 -p precision=bf16
done
speed gpt2-774m-b12-fp8 -p model=gpt2-774m -p micro_batch=12 -p precision=fp8
speed gpt2-774m-b12-bf16 -p model=gpt2-774m -p micro_batch=12 -p precision=bf16
speed llama8b-x4-b2-s4096-fp8 -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=fp8
speed llama8b-x4-b2-s4096-bf16 -p model=llama3-8b -p layers=4 -p seq=4096 -p micro_batch=2 -p precision=bf16
for f in "$RAW"/speed-*.jsonl; do
  python3 - "$f" <<'PY'
import json, sys
f = sys.argv[1]
for line in open(f):
    i = line.find("{")
    if i < 0:
        continue
    try:
        r = json.loads(line[i:])
    except ValueError:
        continue
    if r.get("metric") != "throughput":
        continue
    d, st = r["details"], r["stats"]
    print(f"{f.split('speed-')[-1][:-6]:34s} {st['median']:>9.0f} tokens/s (cv {st.get('cv', 0):.4f}, n {st.get('n')}) "
          f"step {d['step_ms']:.2f} fwd {d['forward_ms']:.2f} bwd {d['backward_ms']:.2f} opt {d['optimizer_ms']:.2f} ms, "
          f"{d['model_bytes'] / 2**30:.2f} GiB, correct {r['correctness'].get('passed')}")
PY
done
tail -n 4 "$RAW/errs.txt"

echo "== waiting for the peers (at $SECONDS s)"
wait $peer_pid
cat "$RAW/peer-status.txt"
for t in fp8-1.5b fp8-774m; do
  python3 -c "
import json,sys
try: r=json.load(open('$RAW/peer-$t.json'))
except Exception as e: print('peer $t: no record', e); sys.exit()
print('peer $t', {k: r.get(k) for k in ('model','batch_per_gpu','precision','tokens_per_s_per_gpu','tokens_per_s_max','warm_s','peak_mem_gib','loss','compiled_graphs','sdpa')})"
  tail -n 2 "$RAW/peer-$t.err" | cut -c1-300
done
tar -C "$OUT" -czf "$OUT/call3-raw.tar.gz" raw && rm -rf "$OUT/raw"
