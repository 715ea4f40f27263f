#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs each for a bounded
# time on its seed corpus: the experiment parser on examples/*.yaml and fuzz/seeds/experiment_spec/
# (inputs that once crashed it), the record path on
# fuzz/seeds/record/ and tests/data/*.json, the HTTP API on fuzz/seeds/http_request/. Exits
# non-zero on any finding; the input that triggered it is left in build-fuzz/findings/.
# FUZZ_SECONDS sets the time per target (default 20); FUZZ_SEED the mutation seed (default 1, so a
# CI finding replays here).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-20}
seed=${FUZZ_SEED:-1}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DSCALEBENCH_FUZZ=ON -DSCALEBENCH_TESTS=OFF -DSCALEBENCH_CUDA=OFF "${launcher[@]}" \
  >build-fuzz.log 2>&1 || { cat build-fuzz.log; exit 1; }
targets=(experiment_spec record http_request)
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz-}"

# Seeds: read from their own folders; what the fuzzer finds new goes to build-fuzz/corpus/.
mkdir -p build-fuzz/seeds/experiment_spec build-fuzz/seeds/record build-fuzz/findings
cp examples/*.yaml fuzz/seeds/experiment_spec/* build-fuzz/seeds/experiment_spec/
cp fuzz/seeds/record/* tests/data/*.json build-fuzz/seeds/record/
seeds_of() {
  case $1 in
    http_request) echo fuzz/seeds/http_request ;;
    *) echo "build-fuzz/seeds/$1" ;;
  esac
}
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz: $t for ${seconds} s"
  if ! build-fuzz/bin/fuzz-$t -max_total_time="$seconds" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" "build-fuzz/corpus/$t" "$(seeds_of "$t")" \
    >"build-fuzz/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; input in build-fuzz/findings/, log build-fuzz/$t.log:"
    tail -n 40 "build-fuzz/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "build-fuzz/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
