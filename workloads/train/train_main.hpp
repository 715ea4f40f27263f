#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/bootstrap/mpi_session.hpp"

namespace scalebench {

// The train workload: data-parallel training steps (or inference) of a CNN on every GPU of the
// run, one rank per GPU, gradients all-reduced through NCCL. Returns the exit code.
int run_train_workload(const MpiSession& mpi, long long run_id, const Json& spec, bool records,
                       const std::function<void(const Json&)>& emit);

}  // namespace scalebench
