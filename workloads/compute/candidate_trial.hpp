#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "workloads/compute/gpu_timer.hpp"

// Choosing the fastest of several ways to do one operation (cuBLASLt's GEMM algorithms, cuDNN's
// RNN algorithms) by timing them on the GPU.
namespace scalebench::compute {

struct CandidateTrial {
  std::size_t best = 0;                         // index of the candidate with the lowest median
  std::vector<std::optional<double>> median_s;  // per candidate; empty where it failed to run
};

// Times every candidate in alternating rounds (one sample of about 5 ms each per round, the first
// round discarded as warm-up) and keeps the lowest median. Timed one after another instead, the
// first candidates run while a GPU fresh from idle is still raising its clocks and lose to slower
// ones. `op(i, stream)` enqueues candidate i once; a candidate that throws is passed over.
// Throws Error when none ran.
CandidateTrial time_candidates(cudaStream_t stream, std::size_t count,
                               const std::function<void(std::size_t, cudaStream_t)>& op, int rounds = 5);

}  // namespace scalebench::compute
