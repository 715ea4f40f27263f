#include "workloads/compute/gpu_timer.hpp"

#include <algorithm>
#include <cmath>

#include "catalog/timing_params.hpp"
#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::compute {

namespace {
constexpr double kAutoSampleSeconds = 0.005;
constexpr int kMaxAutoIters = 1000;
constexpr int kMinSamples = 3;
}  // namespace

TimingConfig TimingConfig::from_params(const Json& params, int repetitions) {
  TimingConfig c;
  const timing::Values t = timing::read(params, {c.warmup, c.iters, c.time_cap_s, true});
  c.warmup = t.warmup;
  c.iters = t.iters;
  c.time_cap_s = t.time_cap;
  c.repetitions = repetitions;
  return c;
}

TimingConfig TimingConfig::from_spec(const Json& spec) {
  return from_params(spec.at("params"), spec.value("repetitions", 20));
}

std::vector<double> time_on_stream(cudaStream_t stream, const TimingConfig& cfg,
                                   const std::function<void(cudaStream_t)>& op) {
  gpu::Event start, stop;
  auto timed = [&](int n) {
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int i = 0; i < n; ++i) op(stream);
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms * 1e-3;
  };
  for (int i = 0; i < cfg.warmup; ++i) op(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int iters = cfg.iters;
  if (iters <= 0) {
    const double probe = timed(1);
    iters = static_cast<int>(
        std::clamp(std::ceil(kAutoSampleSeconds / std::max(probe, 1e-9)), 1.0, static_cast<double>(kMaxAutoIters)));
  }
  std::vector<double> seconds;
  double elapsed = 0;
  for (int k = 0; k < cfg.repetitions; ++k) {
    const double t = timed(iters);
    seconds.push_back(t / iters);
    elapsed += t;
    if (k + 1 >= std::min(kMinSamples, cfg.repetitions) && elapsed >= cfg.time_cap_s) break;
  }
  return seconds;
}

}  // namespace scalebench::compute
