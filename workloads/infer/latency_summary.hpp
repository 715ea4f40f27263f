#pragma once
// Query latencies summarised as MLPerf reports them: percentiles by nearest rank (the smallest
// latency that at least that share of the queries met), not interpolated.
#include <cstddef>
#include <span>
#include <vector>

namespace scalebench::infer {

struct LatencySummary {
  std::size_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;  // milliseconds
};

// `pct` in (0, 100] of `sorted_ms` (ascending, not empty) by nearest rank.
double percentile(std::span<const double> sorted_ms, double pct);

LatencySummary summarize_latencies(std::vector<double> latencies_ms);

}  // namespace scalebench::infer
