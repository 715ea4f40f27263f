#pragma once
#include "workloads/run_request.hpp"

namespace scalebench {

// scalebench-run's entry point for the burn workload (workloads/registry/workload_list.inc).
int run_burn_workload(const RunRequest& run);

}  // namespace scalebench
