#pragma once
// The Server scenario's figure is the highest arrival rate whose run is valid (its p99 latency
// within the bound). Each trial is a whole run, so the search spends few: it grows or shrinks the
// rate by halves or doublings until one valid and one invalid rate bracket the answer, then
// bisects the bracket until it is within a relative tolerance.
#include <functional>
#include <vector>

namespace scalebench::infer {

struct QpsTrial {
  double qps = 0;
  bool valid = false;
};

struct QpsSearch {
  double best_valid_qps = 0;  // 0 when no rate tried was valid
  std::vector<QpsTrial> trials;
  bool bracketed = false;  // a valid and an invalid rate were found (else the trial limit ended it)
};

// `run_valid(qps)` runs the scenario at `qps` and says whether it was valid. Starts at
// `start_qps` (> 0); stops once the bracket is within `rel_tolerance` of its lower end, or after
// `max_trials` runs.
QpsSearch search_max_qps(const std::function<bool(double)>& run_valid, double start_qps, double rel_tolerance = 0.02,
                         int max_trials = 16);

}  // namespace scalebench::infer
