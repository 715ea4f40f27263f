#pragma once
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// scalebench-run's entry point for the burn workload (its folder's scalebench_add_workload).
int run_burn_workload(const RunRequest& run);

}  // namespace scalebench
