#!/bin/bash
# Call 6 on one H200, after call 5 with the same program (a315458): what timing cuBLASLt's
# candidates would give the FP8 step's GEMMs. The gpt workload keeps the first candidate that runs
# (the heuristic's choice); the gemm workload can do either: `algo=heuristic` (that choice) or
# `algo=search` (its 16 best candidates timed, the fastest kept). Shapes: GPT-2 1.5B batch 8
# (8192 token rows), cuBLASLt's column-major m x n x k, TN as the FP8 GEMMs run:
#   forward      out x rows x in:  4800x8192x1600 (QKV), 1600x8192x1600 (proj), 6400x8192x1600 (up),
#                                  1600x8192x6400 (down)
#   weight grad  in x out x rows:  1600x4800x8192, 1600x1600x8192, 1600x6400x8192, 6400x1600x8192
#   input grad   in x rows x out:  1600x8192x4800, 6400x8192x1600 (the others' shapes are above)
# E4M3 x E4M3 here for all (the step's gradients are E5M2: the same kernels' other variant), then
# bf16 with the heuristic for scale. Run from the repository root with B = the bundle's env.sh and
# $OUT set; everything lands in $OUT/call6-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
RAW=$OUT/raw
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$RAW/gpu.txt"
SHAPES=4800x8192x1600,1600x8192x1600,6400x8192x1600,1600x8192x6400,1600x4800x8192,1600x1600x8192,1600x6400x8192,6400x1600x8192,1600x8192x4800,6400x8192x1600
run() {  # tag params...
  timeout 200 $B mpirun -np 1 scalebench-run gemm -p shapes=$SHAPES -p op=tn -p check=false "${@:2}" --emit records \
    > "$RAW/gemm-$1.jsonl" 2>> "$RAW/errs.txt"
  echo "$1 rc=$?"
}
run fp8-heuristic -p precision=fp8e4m3 -p algo=heuristic
run fp8-search -p precision=fp8e4m3 -p algo=search -p candidates=16
run bf16-heuristic -p precision=bf16 -p algo=heuristic
python3 - "$RAW" <<'PY'
import json, sys, glob, os
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/gemm-*.jsonl")):
    tag = os.path.basename(f)[5:-6]
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
        pt = r.get("point", {})
        shape = f'{pt.get("m")}x{pt.get("n")}x{pt.get("k")}'
        rows.setdefault(shape, {})[tag] = r["stats"]["median"]
        if tag == "fp8-search":
            a = r.get("details", {}).get("algorithm", {})
            rows[shape]["rank"] = f'{a.get("heuristic_rank")}/{a.get("candidates")}'

tags = ["fp8-heuristic", "fp8-search", "bf16-heuristic"]
print(f"{'shape (TFLOP/s)':24s} " + " ".join(f"{t:>15s}" for t in tags) + "   search/heuristic, rank kept")
for shape, v in rows.items():
    h, s = v.get("fp8-heuristic"), v.get("fp8-search")
    print(f"{shape:24s} " + " ".join(f"{v.get(t, float('nan')):15.1f}" for t in tags) +
          (f"   {s / h:.3f}x, {v.get('rank')}" if h and s else ""))
PY
tail -n 4 "$RAW/errs.txt"
tar -C "$OUT" -czf "$OUT/call6-raw.tar.gz" raw && rm -rf "$OUT/raw"
