#!/usr/bin/env bash
# Configures and builds into build/ (programs in build/bin). Extra arguments go to CMake,
# e.g. -DSCALEBENCH_CUDA=OFF. SCALEBENCH_BUILD_TARGETS="a b" builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >build.log 2>&1 || { cat build.log; exit 1; }
grep -E "scalebench:|GPU workloads" build.log || true
# shellcheck disable=SC2086 # a list of target names
cmake --build build -j "$(nproc)" ${SCALEBENCH_BUILD_TARGETS:+--target $SCALEBENCH_BUILD_TARGETS}
