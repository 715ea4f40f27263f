#pragma once
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The nodecheck workload as scalebench-run runs it: one process per node reads its node through
// NVML (SCALEBENCH_NVML_LIBRARY, else libnvidia-ml.so.1) and the kernel log; rank 0 emits every
// node's records (node_checks.hpp), or prints them as a table. A node without NVML gives one
// `skipped` record with the reason. Returns 0: findings are the rule engine's to judge.
int run_nodecheck_workload(const RunRequest& run);

}  // namespace scalebench
