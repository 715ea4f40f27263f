#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/bootstrap/mpi_session.hpp"
#include "workloads/run_request.hpp"

namespace scalebench {

// The train workload: data-parallel training steps (or inference) of a CNN on every GPU of the
// run, one rank per GPU, gradients all-reduced through NCCL. Returns the exit code.
int run_train_workload(const RunRequest& run);

}  // namespace scalebench
