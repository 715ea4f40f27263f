#include "workloads/collective/runner.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/stats.hpp"
#include "workloads/collective/pattern.hpp"

namespace scalebench::collective {

namespace {
constexpr int kMinSamples = 3;
constexpr double kAutoSampleSeconds = 0.01;  // iters: auto aims at about 10 ms per sample
constexpr int kMaxAutoIters = 1000;
}  // namespace

void run_sweep(Backend& backend, const Config& c, const MpiSession& mpi,
               const std::function<void(const PointResult&)>& on_point) {
  const int n = backend.nranks();
  const auto sizes = size_sweep(c.min_bytes, c.max_bytes, c.step_factor, c.element_bytes());
  backend.allocate(c, layout_for(c.op, sizes.back(), c.dtype, n));
  // Warm-up at the largest size first, as nccl-tests does: connections, kernels and clocks come
  // up before the first (smallest, most sensitive) point is timed.
  if (c.warmup > 0) backend.time_ops(c, layout_for(c.op, sizes.back(), c.dtype, n), c.warmup);
  for (std::uint64_t bytes : sizes) {
    PointResult p;
    p.layout = layout_for(c.op, bytes, c.dtype, n);
    if (p.layout.send_count == 0 && p.layout.recv_count == 0) continue;  // too small to split over n ranks
    if (c.warmup > 0) backend.time_ops(c, p.layout, c.warmup);
    if (c.iters > 0) {
      p.iters = c.iters;
    } else {
      // Every rank sees the same probe (max over ranks), so all choose the same count.
      double probe = mpi.allreduce_max(backend.time_ops(c, p.layout, 1));
      p.iters = static_cast<int>(
          std::clamp(std::ceil(kAutoSampleSeconds / std::max(probe, 1e-9)), 1.0, double(kMaxAutoIters)));
    }
    double elapsed = 0;
    p.stop = "repetitions";
    for (int k = 0; k < c.repetitions; ++k) {
      const double t = mpi.allreduce_sum(backend.time_ops(c, p.layout, p.iters)) / mpi.size();
      p.seconds.push_back(t);
      elapsed += t * p.iters;  // identical on every rank: the stopping decision is too
      if (k + 1 < std::min(kMinSamples, c.repetitions)) continue;
      if (elapsed >= c.time_cap_s && k + 1 < c.repetitions) {
        p.stop = "time_cap";
        break;
      }
      if (c.target_cv > 0 && summarize(p.seconds).cv <= c.target_cv && k + 1 < c.repetitions) {
        p.stop = "noise";
        break;
      }
    }
    if (c.check) {
      std::optional<long long> wrong = backend.count_wrong_in_place(c, p.layout);
      if (!wrong) {
        const std::vector<int> mine = backend.local_ranks();
        Backend::Buffers inputs;
        for (int r : mine) inputs.push_back(make_input(c, p.layout, n, r));
        const Backend::Buffers outputs = backend.run_checked(c, p.layout, inputs);
        wrong = 0;
        for (std::size_t k = 0; k < mine.size(); ++k) *wrong += count_wrong(c, p.layout, n, mine[k], outputs.at(k));
      }
      p.wrong = mpi.allreduce_sum(*wrong);
    }
    on_point(p);
  }
}

}  // namespace scalebench::collective
