#!/usr/bin/env bash
# Set up, check the C++ files' formatting, build, and run every test (unit tests, then integration
# tests that start a real coordinator, agents and mpirun on loopback), then a bounded fuzz run of
# the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-test-deps.sh
# Formatting first: it takes seconds, the build takes minutes.
scripts/format-check.sh
# Tests on and every workload built (GPU code where the toolkit is, for A100 and H100/H200),
# whatever an earlier quickstart left in build/'s cache.
scripts/build.sh -DSCALEBENCH_TESTS=ON -DSCALEBENCH_CUDA=AUTO -UCMAKE_CUDA_ARCHITECTURES
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Unit tests side by side; the integration tests (RUN_SERIAL: ports, daemons, timings) one at a time.
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc)"
scripts/fuzz.sh
