#!/bin/bash
# Call 5 on one H200: the train kernels' unit tests, five times over, after the test's upload helper
# was made to copy on its own stream (call 3's failure was the helper's, not the kernels').
# B = the bundle's env.sh, with the unit tests' program.
B=${B:-.gpu-bundle/env.sh}
$B scalebench-unit-tests --gtest_filter='TrainGpu.*' --gtest_repeat=5 2>&1 | grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED|Failure" | sort | uniq -c
