#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/bootstrap/mpi_session.hpp"

namespace scalebench {

// The gpt workload: GPT-2 training steps (bf16, synthetic tokens) on one GPU per rank; tokens/s,
// MFU, the step's forward/backward/optimizer split, memory and loss. Returns the exit code.
int run_gpt_workload(const MpiSession& mpi, long long run_id, const Json& spec, bool records,
                     const std::function<void(const Json&)>& emit);

}  // namespace scalebench
