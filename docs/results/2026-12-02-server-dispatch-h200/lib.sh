# What this folder's calls share, sourced by each callN.sh (run from the repository root with B =
# the bundle's env.sh and $OUT set): 2026-12-02-fused-fp16-h200/lib.sh (the GPU's facts, GPU tests,
# Offline runs, peers, the regression study, packing), and here the Server search and the image
# convolution's cuDNN algorithm of an Offline run.
. "$(dirname "${BASH_SOURCE[0]}")/../2026-12-02-fused-fp16-h200/lib.sh"
OFFLINE_DETAILS=check.spread,check.max_error_across_streams_x_spread

# server NAME SECONDS PARAM...: ResNet-50 Server at batch up to 256, the highest Poisson rate whose
# p99 latency is within 15 ms (4 s trials, at most 8, to 3%).
server() {
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  timeout "$limit" $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
    -p model=resnet50 -p scenario=server -p target_qps=0 -p min_duration_s=4 -p search_trials=8 \
    -p search_tolerance=0.03 -p max_batch=256 "$@" > "$RAW/server-$name.jsonl" 2>&1
  echo "server $name ($*) rc=$? in $((SECONDS - start)) s"
  python3 scripts/record-summary.py --details \
    verdict,queries_per_second,latency_ms.p99,mean_batch,engine.build_s,engine.device_bytes,search.trials \
    "$RAW/server-$name.jsonl" | tail -1 | cut -c1-1800
}

# image_algo NAME: the image convolution's cuDNN algorithm in offline NAME's record.
image_algo() {
  python3 - "$RAW/offline-$1.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    e = r.get("details", {}).get("engine", {})
    for key in ("fused_net", "quantization"):
        for layer in (e.get(key) or {}).get("convolutions", []):
            if "cudnn_fwd_algo" in layer:
                print(sys.argv[1].rsplit("/", 1)[-1], key, "image convolution: cudnnConvolutionFwdAlgo_t", layer["cudnn_fwd_algo"])
PY
}
