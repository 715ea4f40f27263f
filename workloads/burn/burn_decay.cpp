#include "workloads/burn/burn_decay.hpp"

#include <algorithm>

#include "analysis/stats.hpp"

namespace scalebench::burn {

double decay(const std::vector<double>& v) {
  if (v.empty()) return 1;
  const std::size_t q = std::max<std::size_t>(1, v.size() / 4);
  const double first = median(std::vector<double>(v.begin(), v.begin() + q));
  const double last = median(std::vector<double>(v.end() - q, v.end()));
  return first > 0 ? last / first : 1;
}

}  // namespace scalebench::burn
