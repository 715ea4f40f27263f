// The LoadGen-style harness's rules and arithmetic: MLPerf's scenario rules, nearest-rank
// percentiles, the VALID/INVALID verdict with its reasons, the Server scenario's Poisson arrivals
// and its search for the highest valid rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/stats.hpp"
#include "common/error.hpp"
#include "workloads/infer/arrival_schedule.hpp"
#include "workloads/infer/latency_summary.hpp"
#include "workloads/infer/qps_search.hpp"
#include "workloads/infer/scenario.hpp"
#include "workloads/infer/scenario_verdict.hpp"

namespace scalebench::infer {
namespace {

TEST(InferScenario, MlperfsRulesForResNet50AndEveryModel) {
  const ScenarioRules server = rules_for(Scenario::server, "resnet50");
  EXPECT_EQ(server.latency_percentile, 99);
  EXPECT_EQ(server.latency_bound_ms, 15);
  EXPECT_EQ(server.min_duration_s, 600);
  EXPECT_EQ(rules_for(Scenario::server, "bert").latency_bound_ms, 10) << "the bound of every other model";
  const ScenarioRules multi = rules_for(Scenario::multi_stream, "resnet50");
  EXPECT_EQ(multi.samples_per_query, 8);
  EXPECT_EQ(multi.min_queries, 662u);
  EXPECT_EQ(multi.latency_percentile, 99);
  EXPECT_EQ(multi.latency_bound_ms, 0) << "MultiStream reports its p99, it is not bounded";
  EXPECT_EQ(rules_for(Scenario::offline, "resnet50").samples_per_query, 24576);
  EXPECT_EQ(rules_for(Scenario::single_stream, "resnet50").latency_percentile, 90);
  EXPECT_EQ(parse_scenario("multi_stream"), Scenario::multi_stream);
  try {
    parse_scenario("Offline");
    FAIL() << "a name in another spelling was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offline, server, single_stream, multi_stream"), std::string::npos)
        << e.what();
  }
}

TEST(InferLatency, PercentilesAreNearestRank) {
  std::vector<double> ms(100);
  std::iota(ms.begin(), ms.end(), 1.0);  // 1 .. 100 ms
  const LatencySummary s = summarize_latencies(ms);
  EXPECT_EQ(s.n, 100u);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.p999, 100) << "99.9% of 100 queries needs the 100th";
  EXPECT_EQ(s.max, 100);
  std::vector<double> thousand(1000);
  std::iota(thousand.begin(), thousand.end(), 1.0);
  EXPECT_EQ(summarize_latencies(thousand).p999, 999);
  EXPECT_EQ(summarize_latencies({7.0}).p99, 7.0);
  EXPECT_THROW(percentile(std::vector<double>{}, 50), Error);
}

// The report draws the CDF from these points: the fastest query first, then each share's latency
// by the same nearest rank as the percentiles, so the curve passes through p50, p90 and p99.
TEST(InferLatency, CdfRunsFromTheFastestToTheSlowestQuery) {
  std::vector<double> sorted(1000);
  std::iota(sorted.begin(), sorted.end(), 1.0);  // 1 .. 1000 ms
  std::vector<double> finished = sorted;
  std::reverse(finished.begin(), finished.end());  // the order queries finished in does not matter
  const LatencySummary s = summarize_latencies(finished);
  ASSERT_EQ(s.cdf.size(), std::size(kCdfPercents) + 1);
  EXPECT_EQ(s.cdf.front().percent, 0);
  EXPECT_EQ(s.cdf.front().ms, 1);
  EXPECT_EQ(s.cdf.back().percent, 100);
  EXPECT_EQ(s.cdf.back().ms, 1000);
  for (std::size_t i = 1; i < s.cdf.size(); ++i) {
    EXPECT_GT(s.cdf[i].percent, s.cdf[i - 1].percent);
    EXPECT_EQ(s.cdf[i].ms, percentile(sorted, s.cdf[i].percent)) << s.cdf[i].percent;
  }
  const auto at = [&](double pct) {
    for (const CdfPoint& c : s.cdf)
      if (c.percent == pct) return c.ms;
    return -1.0;
  };
  EXPECT_EQ(at(50), s.p50);
  EXPECT_EQ(at(90), s.p90);
  EXPECT_EQ(at(99), s.p99);
  EXPECT_EQ(at(99.9), s.p999);
  EXPECT_TRUE(summarize_latencies({}).cdf.empty());
}

// A Server run at 5,000 queries/s for 600 s whose slowest 11 queries in 1,000 took `slow_ms`: one
// more than 1%, so they decide the p99.
RunTally server_run(double slow_ms) {
  RunTally r;
  r.queries = r.samples = 3'000'000;
  r.duration_s = 600.5;
  r.scheduled_qps = 5000;
  r.latencies_ms.assign(989, 4.0);
  r.latencies_ms.resize(1000, slow_ms);
  return r;
}

TEST(InferVerdict, ServerIsValidOnlyWithinItsLatencyBound) {
  const ScenarioRules rules = rules_for(Scenario::server, "resnet50");
  const ScenarioResult ok = judge(Scenario::server, rules, server_run(14.0));
  EXPECT_TRUE(ok.valid);
  EXPECT_TRUE(ok.reasons.empty());
  EXPECT_EQ(ok.figure, 5000);
  EXPECT_EQ(ok.figure_unit, "queries/s");
  EXPECT_EQ(ok.reported_latency_ms, 14.0);
  const ScenarioResult late = judge(Scenario::server, rules, server_run(16.0));
  EXPECT_FALSE(late.valid);
  ASSERT_EQ(late.reasons.size(), 1u);
  EXPECT_EQ(late.reasons[0], "p99 latency 16.00 ms, over the 15 ms bound");
  EXPECT_TRUE(ok.within_bound);
  EXPECT_FALSE(late.within_bound);
}

// The Server search runs trials shorter than the rules' minimum: a short trial within the bound
// must count as within it, or no rate is ever found (every trial of the first GPU run was so).
TEST(InferVerdict, AShortServerTrialWithinTheBoundIsWithinItThoughInvalid) {
  RunTally r = server_run(13.6);
  r.duration_s = 4.0;
  r.queries = r.samples = 58'000;
  const ScenarioResult s = judge(Scenario::server, rules_for(Scenario::server, "resnet50"), r);
  EXPECT_FALSE(s.valid);
  EXPECT_TRUE(s.within_bound);
  EXPECT_FALSE(judge(Scenario::server, rules_for(Scenario::server, "resnet50"), RunTally{}).within_bound);
}

TEST(InferVerdict, ShortRunsAndTooFewQueriesOrSamplesAreInvalidWithEachReason) {
  RunTally single;
  single.queries = single.samples = 40;
  single.duration_s = 12.3;
  single.latencies_ms.assign(40, 1.5);
  const ScenarioResult s = judge(Scenario::single_stream, rules_for(Scenario::single_stream, "resnet50"), single);
  EXPECT_FALSE(s.valid);
  EXPECT_EQ(s.reasons, (std::vector<std::string>{"ran 12.3 s, under the 600 s minimum",
                                                 "completed 40 queries, under the 100 minimum"}));
  EXPECT_EQ(s.figure, 1.5) << "the figure is still reported";
  EXPECT_EQ(s.figure_unit, "ms");

  RunTally offline;
  offline.queries = 1;
  offline.samples = 20000;
  offline.duration_s = 800;
  offline.latencies_ms = {800000};
  const ScenarioResult o = judge(Scenario::offline, rules_for(Scenario::offline, "resnet50"), offline);
  EXPECT_EQ(o.reasons, (std::vector<std::string>{"completed 20000 samples, under the 24576 minimum"}));
  EXPECT_DOUBLE_EQ(o.figure, 25);
  EXPECT_EQ(o.figure_unit, "samples/s");
  offline.samples = 24576 * 40;
  EXPECT_TRUE(judge(Scenario::offline, rules_for(Scenario::offline, "resnet50"), offline).valid);
}

TEST(InferArrivals, PoissonAtTheTargetRateAndRepeatableBySeed) {
  const std::vector<double> a = poisson_arrivals(2000, 200'000, 42);
  EXPECT_EQ(a, poisson_arrivals(2000, 200'000, 42));
  EXPECT_NE(a, poisson_arrivals(2000, 200'000, 43));
  ASSERT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_NEAR(static_cast<double>(a.size()) / a.back(), 2000, 2000 * 0.01);
  // Exponential gaps: their standard deviation equals their mean.
  std::vector<double> gaps(a.size());
  std::adjacent_difference(a.begin(), a.end(), gaps.begin());
  const Summary g = summarize(gaps);
  EXPECT_NEAR(g.cv, 1.0, 0.02);
  EXPECT_THROW(poisson_arrivals(0, 10, 1), Error);
}

TEST(InferQpsSearch, FindsTheHighestValidRateWithinTheTolerance) {
  int runs = 0;
  auto system = [&runs](double qps) {
    ++runs;
    return qps <= 7300;
  };
  const QpsSearch up = search_max_qps(system, 1000);
  EXPECT_TRUE(up.bracketed);
  EXPECT_LE(up.best_valid_qps, 7300);
  EXPECT_GE(up.best_valid_qps, 7300 / 1.02);
  EXPECT_LE(runs, 16);
  EXPECT_EQ(static_cast<int>(up.trials.size()), runs);
  const QpsSearch down = search_max_qps(system, 50'000);
  EXPECT_LE(down.best_valid_qps, 7300);
  EXPECT_GE(down.best_valid_qps, 7300 / 1.02);
  const QpsSearch never = search_max_qps([](double) { return false; }, 1000, 0.02, 6);
  EXPECT_EQ(never.best_valid_qps, 0);
  EXPECT_FALSE(never.bracketed);
  EXPECT_EQ(never.trials.size(), 6u);
}

}  // namespace
}  // namespace scalebench::infer
