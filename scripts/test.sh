#!/usr/bin/env bash
# Set up, build, and run every test (unit tests, then integration tests that start a real
# coordinator, agents and mpirun on loopback), then a bounded fuzz run of the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-test-deps.sh
# Tests on, whatever an earlier quickstart left in build/'s cache.
scripts/build.sh -DSCALEBENCH_TESTS=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure --timeout 600
scripts/fuzz.sh
