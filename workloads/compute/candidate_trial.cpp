#include "workloads/compute/candidate_trial.hpp"

#include <string>

#include "analysis/stats.hpp"
#include "common/error.hpp"

namespace scalebench::compute {

CandidateTrial time_candidates(cudaStream_t stream, std::size_t count,
                               const std::function<void(std::size_t, cudaStream_t)>& op, int rounds) {
  TimingConfig sample;
  sample.warmup = 1;
  sample.iters = 0;  // about 5 ms a sample
  sample.repetitions = 1;
  sample.time_cap_s = 0;
  std::vector<std::vector<double>> seconds(count);
  std::vector<bool> failed(count, false);
  for (int round = 0; round <= rounds; ++round)
    for (std::size_t i = 0; i < count; ++i) {
      if (failed[i]) continue;
      try {
        const std::vector<double> t = time_on_stream(stream, sample, [&](cudaStream_t s) { op(i, s); });
        if (round > 0) seconds[i].insert(seconds[i].end(), t.begin(), t.end());
      } catch (const Error&) {
        failed[i] = true;
        (void)cudaGetLastError();  // a refused launch must not fail the next candidate
      }
    }
  CandidateTrial trial;
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    if (failed[i] || seconds[i].empty()) {
      trial.median_s.emplace_back();
      continue;
    }
    const double m = median(seconds[i]);
    trial.median_s.emplace_back(m);
    if (!any || m < *trial.median_s[trial.best]) trial.best = i, any = true;
  }
  if (!any) throw Error("none of the " + std::to_string(count) + " candidates ran");
  return trial;
}

}  // namespace scalebench::compute
