#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "common/json.hpp"

// CUDA-event timing shared by the compute workloads: warm-up, then timed samples of `iters`
// back-to-back operations on one stream, each sample bracketed by two events.
namespace scalebench::compute {

struct TimingConfig {
  int warmup = 5;         // untimed operations first (clocks up, caches and autotuners settled)
  int iters = 0;          // operations per timed sample; 0: enough for about 5 ms a sample
  int repetitions = 20;   // timed samples (at least 3 unless repetitions says fewer)
  double time_cap_s = 2;  // stop sampling once this much time was measured
  // From the workload parameters `warmup`, `iters`, `time_cap` (when present) and the run's
  // repetitions.
  static TimingConfig from_params(const Json& params, int repetitions);
  // The same from a run's spec: its params and repetitions (20 where it has none).
  static TimingConfig from_spec(const Json& spec);
};

// Seconds per operation of each timed sample. `op` enqueues one operation on the stream.
std::vector<double> time_on_stream(cudaStream_t stream, const TimingConfig& cfg,
                                   const std::function<void(cudaStream_t)>& op);

}  // namespace scalebench::compute
