#include "workloads/burn/burn_decay.hpp"

#include <algorithm>
#include <utility>

#include "analysis/stats.hpp"

namespace scalebench::burn {

namespace {
// Medians of the first and the last quarter (one value each with fewer than 4).
std::pair<double, double> quarters(const std::vector<double>& v) {
  const std::size_t q = std::max<std::size_t>(1, v.size() / 4);
  return {median(std::vector<double>(v.begin(), v.begin() + q)), median(std::vector<double>(v.end() - q, v.end()))};
}
}  // namespace

double decay(const std::vector<double>& v) {
  if (v.empty()) return 1;
  const auto [first, last] = quarters(v);
  return first > 0 ? last / first : 1;
}

ClockHold clock_hold(const std::vector<double>& clocks) {
  if (clocks.empty()) return {};
  const auto [first, last] = quarters(clocks);
  return {first, last};
}

}  // namespace scalebench::burn
