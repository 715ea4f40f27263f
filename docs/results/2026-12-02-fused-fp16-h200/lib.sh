# What this folder's calls share, sourced by each callN.sh (run from the repository root with
# B = the bundle's env.sh and $OUT set): the GPU's facts, the GPU tests, an infer Offline run of
# ResNet-50 at batch 256 on 3 streams with its check, the torch.compile peer, the GPU regression
# study, and the raw output packed as $OUT/callN-raw.tar.gz.
B=${B:-.gpu-bundle/env.sh}
RAW=$OUT/raw
mkdir -p "$RAW"
export CUDA_VISIBLE_DEVICES=0

gpu_facts() {
  nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv |
    tee "$RAW/gpu.txt"
}

# gpu_tests FILTER SECONDS: session-gpu-tests (the unit tests' GPU files) under a gtest filter.
gpu_tests() {
  echo "== GPU tests $1"; local start=$SECONDS
  timeout "$2" $B session-gpu-tests --gtest_filter="$1" > "$RAW/unit.txt" 2>&1
  echo "GPU tests rc=$? in $((SECONDS - start)) s"
  grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|Expected|Which is|error|fused:|exception" "$RAW/unit.txt" |
    cut -c1-400 | head -60
}

# offline NAME SECONDS PARAM...: scalebench-run infer, ResNet-50 Offline at batch 256 on 3 streams,
# 10 s at least, with its batching check; PARAMs as -p key=value.
offline() {
  local name=$1 limit=$2 start=$SECONDS
  shift 2
  timeout "$limit" $B mpirun --allow-run-as-root --bind-to none -np 1 scalebench-run infer --format json \
    -p model=resnet50 -p max_batch=256 -p streams=3 -p scenario=offline -p min_duration_s=10 "$@" \
    > "$RAW/offline-$name.jsonl" 2>&1
  echo "$name ($*) rc=$? in $((SECONDS - start)) s"
  local d=samples_per_second,check.max_error_x_spread,check.top1_agree,engine.build_s
  d=$d,engine.quantization.split.trained_convolutions,engine.quantization.profile.batch_us
  d=$d,engine.quantization.profile.by_kind_us,engine.fused_net.profile.batch_us,engine.fused_net.profile.by_kind_us
  d=$d,engine.quantization.image_convolution,engine.fused_net.image_convolution
  d=$d${OFFLINE_DETAILS:+,$OFFLINE_DETAILS}  # a later folder's extra fields
  python3 scripts/record-summary.py --details $d "$RAW/offline-$name.jsonl" | tail -1 | cut -c1-1400
}

# peer PRECISION MODE SECONDS [ARG...]: examples/pytorch/resnet50_infer.py at batch 256.
peer() {
  local precision=$1 mode=$2 limit=$3 start=$SECONDS
  shift 3
  echo "== torch.compile peer $precision ($mode $*), batch 256"
  timeout "$limit" python3 examples/pytorch/resnet50_infer.py --precision "$precision" --batches 256 --mode "$mode" \
    "$@" > "$RAW/peer-$precision-$mode.jsonl" 2> "$RAW/peer-$precision-$mode.err"
  echo "peer $precision $mode rc=$? in $((SECONDS - start)) s"
  cat "$RAW/peer-$precision-$mode.jsonl"
  grep -v "triton_\|AUTOTUNE\|^ *$" "$RAW/peer-$precision-$mode.err" | tail -2
}

regression_study() {
  echo "== regression study"; local start=$SECONDS
  timeout 150 $B scripts/gpu-regression.sh \
    --baseline docs/results/2026-12-01-guard-baseline-h200/accepted-records.jsonl.gz --out "$RAW/gr" > "$RAW/gr.txt" 2>&1
  echo "gpu-regression rc=$? in $((SECONDS - start)) s"
  grep -E "[0-9]+ regressions|gpu-regression:|REFERENCE FAILED|nothing to compare" "$RAW/gr.txt" | cut -c1-140 | tail -20
}

# pack N: the raw output as $OUT/callN-raw.tar.gz.
pack() { tar -C "$OUT" -czf "$OUT/call$1-raw.tar.gz" raw && rm -rf "$OUT/raw"; }
