#pragma once
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The gpt workload: GPT-2 training steps (bf16, synthetic tokens) on one GPU per rank; tokens/s,
// MFU, the step's forward/backward/optimizer split, memory and loss. Returns the exit code.
int run_gpt_workload(const RunRequest& run);

}  // namespace scalebench
