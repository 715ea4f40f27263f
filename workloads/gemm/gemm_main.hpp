#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The gemm workload (docs/gemm.md) as scalebench-run runs it: one rank per GPU, every GPU
// measuring each shape at the same moment. With `records`, every record goes to `emit`; without,
// a table goes to stdout. Returns 0, or 3 when a point failed. Built only with SCALEBENCH_HAVE_CUDA.
int run_gemm_workload(const RunRequest& run);

}  // namespace scalebench
