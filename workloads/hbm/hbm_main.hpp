#pragma once
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// scalebench-run's entry point for the hbm workload (its folder's scalebench_add_workload).
int run_hbm_workload(const RunRequest& run);

}  // namespace scalebench
