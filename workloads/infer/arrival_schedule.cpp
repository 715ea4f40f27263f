#include "workloads/infer/arrival_schedule.hpp"

#include <random>

#include "common/error.hpp"

namespace scalebench::infer {

std::vector<double> poisson_arrivals(double qps, std::size_t count, std::uint64_t seed) {
  if (!(qps > 0)) throw Error("Server scenario: target_qps must be above 0");
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(qps);
  std::vector<double> at(count);
  double t = 0;
  for (auto& a : at) a = t += gap(rng);
  return at;
}

}  // namespace scalebench::infer
