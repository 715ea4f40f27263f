#include "workloads/infer/search_give_up.hpp"

#include <cmath>
#include <cstdio>

namespace scalebench::infer {

std::uint64_t late_queries_allowed(double percentile, std::size_t scheduled) {
  return static_cast<std::uint64_t>(std::floor((1 - percentile / 100) * static_cast<double>(scheduled) + 1e-9));
}

std::string give_up_reason(double elapsed_s, std::uint64_t late, std::size_t scheduled, const std::string& what,
                           double bound_ms, double percentile) {
  char why[240];
  std::snprintf(why, sizeof why,
                "stopped after %.1f s: %llu of %zu scheduled %s are past %.0f ms, more than p%.0f allows", elapsed_s,
                static_cast<unsigned long long>(late), scheduled, what.c_str(), bound_ms, percentile);
  return why;
}

}  // namespace scalebench::infer
