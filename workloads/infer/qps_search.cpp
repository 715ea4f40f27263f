#include "workloads/infer/qps_search.hpp"

#include "common/error.hpp"

namespace scalebench::infer {

QpsSearch search_max_qps(const std::function<bool(double)>& run_valid, double start_qps, double rel_tolerance,
                         int max_trials) {
  if (!(start_qps > 0)) throw Error("Server search: the starting rate must be above 0");
  if (!(rel_tolerance > 0)) throw Error("Server search: the tolerance must be above 0");
  QpsSearch s;
  auto trial = [&](double qps) {
    const bool ok = run_valid(qps);
    s.trials.push_back({qps, ok});
    return ok;
  };
  double lo = 0, hi = 0;  // highest valid, lowest invalid; 0 while unknown
  double qps = start_qps;
  while (static_cast<int>(s.trials.size()) < max_trials && (lo == 0 || hi == 0)) {
    if (trial(qps)) {
      lo = qps;
      qps = hi == 0 ? qps * 2 : qps;
    } else {
      hi = qps;
      qps = lo == 0 ? qps / 2 : qps;
    }
  }
  s.bracketed = lo > 0 && hi > 0;
  while (s.bracketed && static_cast<int>(s.trials.size()) < max_trials && (hi - lo) > rel_tolerance * lo) {
    const double mid = (lo + hi) / 2;
    (trial(mid) ? lo : hi) = mid;
  }
  s.best_valid_qps = lo;
  return s;
}

}  // namespace scalebench::infer
