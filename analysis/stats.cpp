#include "analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace scalebench {

double median(std::span<const double> samples) {
  if (samples.empty()) return 0;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean(std::span<const double> samples) {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(std::span<const double> samples) {
  if (samples.size() < 2) return 0;
  double m = mean(samples);
  double sq = 0;
  for (double x : samples) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(samples.size() - 1));
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) return s;
  s.median = median(samples);
  s.mean = mean(samples);
  s.stddev = stddev(samples);
  s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

}  // namespace scalebench
