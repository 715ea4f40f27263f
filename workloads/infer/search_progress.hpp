#pragma once
// A Server search's progress, one line after each trial, for a user watching it: a search under
// MLPerf's rules runs up to search_trials trials of 600 s each and prints its record only at the
// end. The line gives the trial's rate and latency against the bound, how long it ran, and how much
// longer the search can take at most (the trials left, each as long as the longest so far).
#include <string>

namespace scalebench::infer {

struct TrialProgress {
  int trial = 0;       // 1-based
  int max_trials = 0;  // search_trials
  double qps = 0;
  bool within_bound = false;
  std::string latency;         // what was judged, e.g. "p99 11.82 ms"
  double trial_s = 0;          // how long this trial took
  double longest_trial_s = 0;  // the longest trial so far, this one included
};

// "server search: trial 3 of at most 8, 27257 queries/s: p99 11.82 ms, within the bound (4.0 s);
// at most 5 more trials, up to 20 s"
std::string search_progress_line(const TrialProgress& p);

}  // namespace scalebench::infer
