#include "workloads/mllog/time_to_train.hpp"

namespace scalebench::mllog {

bool result_counts(int seeds, int reached) { return seeds > 0 && reached >= 1 && reached >= seeds - 1; }

TimeToTrain time_to_train(const std::vector<std::optional<double>>& per_seed) {
  TimeToTrain t;
  t.seeds = static_cast<int>(per_seed.size());
  for (const auto& s : per_seed)
    if (s) t.seconds.push_back(*s);
  t.reached = static_cast<int>(t.seconds.size());
  t.counts = result_counts(t.seeds, t.reached);
  if (!t.seconds.empty()) t.stats = summarize(t.seconds);
  return t;
}

Json TimeToTrain::to_json() const {
  Json j{{"seeds", seeds}, {"reached", reached}, {"counts", counts}, {"rule", kSeedRule}};
  if (stats.n > 0) {
    j["median_s"] = stats.median;
    j["min_s"] = stats.min;
    j["max_s"] = stats.max;
  }
  return j;
}

}  // namespace scalebench::mllog
