#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The conv workload as scalebench-run runs it: one rank per GPU, every point measured on all
// GPUs at once; records (with peak and pct_of_peak) or a table. Returns 0, or 3 when a point
// failed. Built only with SCALEBENCH_HAVE_CUDA.
int run_conv_workload(const RunRequest& run);

}  // namespace scalebench
