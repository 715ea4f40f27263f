#pragma once
#include <optional>
#include <string>
#include <vector>

#include "analysis/stats.hpp"
#include "common/json.hpp"

// Time to train over seeds, as MLPerf Training scores it: each seed trains to the target or gives
// up; the result is the time over the seeds that reached it, and counts only if enough did.
// Pure: no CUDA.
namespace scalebench::mllog {

// The rule applied: MLPerf's allowance of one run that does not converge among a benchmark's runs.
inline constexpr const char* kSeedRule = "counts when at most one seed misses the target (MLPerf's rule)";
bool result_counts(int seeds, int reached);

struct TimeToTrain {
  int seeds = 0, reached = 0;
  bool counts = false;
  std::vector<double> seconds;  // of the seeds that reached the target, in seed order
  Summary stats;                // over `seconds` (n = 0 when none reached)
  Json to_json() const;         // {seeds, reached, counts, rule, median_s, min_s, max_s}
};

// One entry per seed: its seconds to the target, or nullopt when it missed.
TimeToTrain time_to_train(const std::vector<std::optional<double>>& per_seed);

}  // namespace scalebench::mllog
