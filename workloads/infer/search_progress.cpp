#include "workloads/infer/search_progress.hpp"

#include <algorithm>

#include "record/table_printer.hpp"

namespace scalebench::infer {

std::string search_progress_line(const TrialProgress& p) {
  const int left = std::max(p.max_trials - p.trial, 0);
  std::string line = "server search: trial " + std::to_string(p.trial) + " of at most " + std::to_string(p.max_trials) +
                     ", " + fixed_number(p.qps, 0) + " queries/s: " + p.latency +
                     (p.within_bound ? ", within the bound" : ", over the bound") + " (" + fixed_number(p.trial_s, 1) +
                     " s)";
  if (left == 0) return line + "; the last trial";
  return line + "; at most " + std::to_string(left) + (left == 1 ? " more trial" : " more trials") + ", up to " +
         fixed_number(left * p.longest_trial_s, 0) + " s";
}

}  // namespace scalebench::infer
