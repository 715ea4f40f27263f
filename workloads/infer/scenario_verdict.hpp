#pragma once
// Whether a finished scenario run counts, as MLPerf's rules judge it (VALID or INVALID, with every
// reason), and the figure the scenario reports: Offline samples/s, Server the scheduled queries/s
// it kept within its latency bound, SingleStream its p90 latency, MultiStream its p99.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/infer/latency_summary.hpp"
#include "workloads/infer/scenario.hpp"

namespace scalebench::infer {

// What a run did: queries and samples completed, from the first query issued to the last one
// answered, and each query's latency (issue to completion).
struct RunTally {
  std::uint64_t queries = 0, samples = 0;
  double duration_s = 0;
  std::vector<double> latencies_ms;
  double scheduled_qps = 0;  // Server: the rate queries arrived at
  std::string gave_up;       // why a Server search trial stopped early; "" if it did not
};

struct ScenarioResult {
  bool valid = false;
  std::vector<std::string> reasons;  // why not valid, one line each; empty when valid
  // Queries completed within the latency bound, whatever the duration and count: what the
  // Server search asks of a trial, whose duration it sets below the rules' minimum.
  bool within_bound = false;
  LatencySummary latency;
  double reported_latency_ms = 0;  // the scenario's percentile
  double samples_per_second = 0, queries_per_second = 0;
  double figure = 0;  // what the scenario reports (see above)
  std::string figure_unit;
};

ScenarioResult judge(Scenario scenario, const ScenarioRules& rules, const RunTally& run);

}  // namespace scalebench::infer
