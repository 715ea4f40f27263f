#!/usr/bin/env bash
# Configures and builds into build/ (programs in build/bin). Extra arguments go to CMake,
# e.g. -DSCALEBENCH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >build.log 2>&1 || { cat build.log; exit 1; }
grep -E "scalebench:|GPU workloads" build.log || true
cmake --build build -j "$(nproc)"
