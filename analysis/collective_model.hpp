#pragma once
#include <string>
#include <vector>

namespace scalebench {

// A collective's time over rank counts and sizes, fitted on several rank counts at once so that
// it can be checked at a count it was not fitted on (`scalebench predict`, docs/predictions.md):
//
//   t(n, S) = steps(n) * a + factor(n) * S / B
//
// with steps(n) the ring's latency steps (ring_steps), factor(n) nccl-tests' busbw factor, a the
// latency of one step and B the bus bandwidth, both the same at every n. busbw(n, S) =
// S / t(n, S) * factor(n) then tends to B for large S, and a alone sets the small sizes.
// Fitted by least squares on relative error (each point weighted 1/t^2), so that a 1 KiB point
// counts as much as a 64 MiB one.
struct CollectivePoint {
  int ranks = 0;
  double size_bytes = 0;
  double time_us = 0;  // the median of the measured times at (ranks, size)
};

struct CollectiveModel {
  std::string op;
  double step_latency_us = 0;     // a
  double bus_bandwidth_gbps = 0;  // B
  int points = 0;                 // points fitted (at 2 ranks or more)
  int rank_counts = 0;            // distinct rank counts among them
  double max_fit_error_pct = 0;   // the worst |relative residual| over the fitted points, in %

  // Two rank counts at least: with one, nothing tells how time grows with the rank count.
  bool ok() const { return rank_counts >= 2 && points >= 2 && bus_bandwidth_gbps > 0; }
  // 0 where the op moves nothing at `ranks` (fewer than 2) or the model is not ok.
  double time_us(int ranks, double size_bytes) const;
  double busbw_gbps(int ranks, double size_bytes) const;
};

// Points at fewer than 2 ranks or with no positive time are left out. A negative latency (noise)
// is refitted as 0 with the bandwidth alone; a bandwidth that comes out non-positive is not ok.
CollectiveModel fit_collective_model(const std::string& op, const std::vector<CollectivePoint>& points);

}  // namespace scalebench
