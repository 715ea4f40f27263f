#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The rnn workload (docs/rnn.md) as scalebench-run runs it: one rank per GPU, every GPU stepping
// the same recurrent network at once, one point per hidden size. Returns the exit code: 0, or 3
// when a point failed or its output was off the reference. Built only with SCALEBENCH_HAVE_CUDA.
int run_rnn_workload(const RunRequest& run);

}  // namespace scalebench
