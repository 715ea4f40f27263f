#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The train workload: data-parallel training steps (or inference) of a CNN on every GPU of the
// run, one rank per GPU, gradients all-reduced through NCCL. Returns the exit code.
// With a `data` parameter: time to accuracy instead (run_tta_workload).
int run_train_workload(const RunRequest& run);

// The time-to-accuracy mode (workloads/train/tta_main.cpp): every seed trained on real data to the
// target; records per seed and their summary.
int run_tta_workload(const RunRequest& run);

}  // namespace scalebench
