#pragma once
#include <map>
#include <string>
#include <vector>

namespace scalebench {

// A collective's time over rank counts and sizes, fitted on several rank counts at once so that
// it can be checked at a count it was not fitted on (`scalebench predict`, docs/predictions.md):
//
//   t(n, S) = steps(n) * a + factor(n) * S / B(S)
//
// with steps(n) the ring's latency steps (ring_steps), factor(n) nccl-tests' busbw factor, a the
// latency of one step, the same at every size and n, and B(S) the bus bandwidth at size S, the
// same at every n. One B per size because a real link's effective bandwidth depends on the message
// size (protocol switches, windows, caches): on 10 Gbit/s links a ring all_reduce gave 1.2 GB/s
// up to 16 MiB and 0.7 at 64 MiB, which one B for all sizes missed by 45%. busbw(n, S) =
// S / t(n, S) * factor(n) then tends to B(S) where the latency term is small, and a sets how busbw
// changes with n at a size.
// Fitted by least squares on relative error (each point weighted 1/t^2), so that a 1 KiB point
// counts as much as a 64 MiB one.
struct CollectivePoint {
  int ranks = 0;
  double size_bytes = 0;
  double time_us = 0;  // the median of the measured times at (ranks, size)
};

struct CollectiveModel {
  std::string op;
  double step_latency_us = 0;  // a
  // B(S) by size S in bytes, the sizes fitted; infinite where the latency alone explains the time.
  std::map<double, double> bus_bandwidth_gbps;
  int points = 0;                // points fitted (at 2 ranks or more)
  int rank_counts = 0;           // distinct rank counts among them
  double max_fit_error_pct = 0;  // the worst |relative residual| over the fitted points, in %

  // Two rank counts at least: with one, nothing tells how time grows with the rank count.
  bool ok() const;
  // B(S) (infinite: no bandwidth term); 0 at a size that was not fitted.
  double bandwidth_gbps(double size_bytes) const;
  // 0 where the op moves nothing at `ranks` (fewer than 2), at a size not fitted, or when the
  // model is not ok.
  double time_us(int ranks, double size_bytes) const;
  double busbw_gbps(int ranks, double size_bytes) const;
};

// Points at fewer than 2 ranks or with no positive, finite time or size are left out. a is fitted
// jointly on every point, each B(S) given a on its size's points; a negative a (noise) is
// refitted as 0, each B(S) then alone. A size whose time a alone explains (a small size, its
// bandwidth term lost in noise) holds its bandwidth term at 0 in the fit: its B(S) is infinite
// and t = steps(n) * a there. Not ok (no B at all) without a size measured at 2 rank counts or
// more, since only such a size says how time grows with n.
CollectiveModel fit_collective_model(const std::string& op, const std::vector<CollectivePoint>& points);

}  // namespace scalebench
