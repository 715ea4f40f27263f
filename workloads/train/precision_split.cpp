#include "workloads/train/precision_split.hpp"

#include <string>

#include "common/error.hpp"

namespace scalebench::train {

double split_seconds(const std::vector<ConvTimes>& convs, int n) {
  double sum = 0;
  for (int i = 0; i < static_cast<int>(convs.size()); ++i) {
    const double t = i < n ? convs[static_cast<std::size_t>(i)].sixteen : convs[static_cast<std::size_t>(i)].eight;
    if (t < 0) return -1;
    sum += t;
  }
  return sum;
}

int cheapest_split(const std::vector<ConvTimes>& convs, int at_least) {
  const int total = static_cast<int>(convs.size());
  if (at_least < 0 || at_least > total)
    throw Error("precision split: at least " + std::to_string(at_least) + " of " + std::to_string(total) +
                " convolutions in 16 bits");
  int best = -1;
  double best_s = 0;
  for (int n = at_least; n <= total; ++n) {
    const double s = split_seconds(convs, n);
    if (s >= 0 && (best < 0 || s < best_s)) best = n, best_s = s;
  }
  if (best < 0) throw Error("precision split: no split has a timed graph for every convolution");
  return best;
}

}  // namespace scalebench::train
