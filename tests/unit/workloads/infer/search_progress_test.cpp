// The Server search's progress line: what a user watching a search of long trials reads after
// each one.
#include <gtest/gtest.h>

#include "workloads/infer/search_progress.hpp"

namespace scalebench::infer {
namespace {

TEST(InferSearchProgress, SaysTheTrialItsVerdictAndTheMostTimeLeft) {
  TrialProgress p;
  p.trial = 3;
  p.max_trials = 8;
  p.qps = 27257.37;
  p.within_bound = true;
  p.latency = "p99 11.82 ms";
  p.trial_s = 4.04;
  p.longest_trial_s = 4.1;
  EXPECT_EQ(search_progress_line(p),
            "server search: trial 3 of at most 8, 27257 queries/s: p99 11.82 ms, within the bound (4.0 s); at most "
            "5 more trials, up to 20 s");
  p.trial = 7;
  p.within_bound = false;
  p.longest_trial_s = 600.4;
  EXPECT_EQ(search_progress_line(p),
            "server search: trial 7 of at most 8, 27257 queries/s: p99 11.82 ms, over the bound (4.0 s); at most 1 "
            "more trial, up to 600 s");
  p.trial = 8;
  EXPECT_EQ(search_progress_line(p),
            "server search: trial 8 of at most 8, 27257 queries/s: p99 11.82 ms, over the bound (4.0 s); the last "
            "trial");
}

}  // namespace
}  // namespace scalebench::infer
