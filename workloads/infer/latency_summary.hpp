#pragma once
// Query latencies summarised as MLPerf reports them: percentiles by nearest rank (the smallest
// latency that at least that share of the queries met), not interpolated.
#include <cstddef>
#include <span>
#include <vector>

namespace scalebench::infer {

// The latency at one share of the queries: `percent` of them took at most `ms`.
struct CdfPoint {
  double percent = 0, ms = 0;
};

struct LatencySummary {
  std::size_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;  // milliseconds
  // The distribution for the report's CDF: the fastest query (percent 0), then kCdfPercents by
  // nearest rank, denser in the tail where the latency bounds are; empty with no queries.
  std::vector<CdfPoint> cdf;
};

// Where the CDF is taken: every tenth below 90%, then the tail to the slowest query.
inline constexpr double kCdfPercents[] = {1,  5,  10, 20, 30, 40,   50,   60,    70,    80,
                                          90, 95, 97, 98, 99, 99.5, 99.9, 99.95, 99.99, 100};

// `pct` in (0, 100] of `sorted_ms` (ascending, not empty) by nearest rank.
double percentile(std::span<const double> sorted_ms, double pct);

LatencySummary summarize_latencies(std::vector<double> latencies_ms);

}  // namespace scalebench::infer
