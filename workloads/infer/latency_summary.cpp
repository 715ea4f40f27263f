#include "workloads/infer/latency_summary.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace scalebench::infer {

double percentile(std::span<const double> sorted_ms, double pct) {
  if (sorted_ms.empty()) throw Error("percentile of no latencies");
  if (!(pct > 0 && pct <= 100)) throw Error("percentile " + std::to_string(pct) + ": expected (0, 100]");
  // Rank ceil(p n), 1-based; the small epsilon keeps 99% of 100 at rank 99 despite rounding.
  const double rank = std::ceil(pct / 100.0 * static_cast<double>(sorted_ms.size()) - 1e-9);
  const auto i = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return sorted_ms[std::min(i, sorted_ms.size() - 1)];
}

LatencySummary summarize_latencies(std::vector<double> latencies_ms) {
  LatencySummary s;
  s.n = latencies_ms.size();
  if (latencies_ms.empty()) return s;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  s.p50 = percentile(latencies_ms, 50);
  s.p90 = percentile(latencies_ms, 90);
  s.p99 = percentile(latencies_ms, 99);
  s.p999 = percentile(latencies_ms, 99.9);
  s.max = latencies_ms.back();
  s.cdf.push_back({0, latencies_ms.front()});
  for (const double pct : kCdfPercents) s.cdf.push_back({pct, percentile(latencies_ms, pct)});
  return s;
}

}  // namespace scalebench::infer
