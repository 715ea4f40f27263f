#pragma once
#include "workloads/run_request.hpp"

namespace scalebench {

// scalebench-run's entry point for the checksum workload (workloads/registry/workload_list.inc).
int run_checksum_workload(const RunRequest& run);

}  // namespace scalebench
