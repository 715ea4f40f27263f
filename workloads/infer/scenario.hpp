#pragma once
// MLPerf Inference's four scenarios and the rules a run of each must meet to count (LoadGen's
// mlperf.conf and TestSettings defaults): how long it runs, how many queries it completes, which
// latency percentile it reports and, for Server, the bound that percentile must meet.
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench::infer {

enum class Scenario { offline, server, single_stream, multi_stream };

// "offline", "server", "single_stream", "multi_stream" (MLPerf's Offline, Server, SingleStream,
// MultiStream); anything else is an error that lists these.
Scenario parse_scenario(const std::string& name);
std::string scenario_name(Scenario s);
const std::vector<std::string>& scenario_names();

struct ScenarioRules {
  double min_duration_s = 600;      // every scenario runs at least 10 minutes
  std::uint64_t min_queries = 100;  // LoadGen's default minimum query count
  int samples_per_query = 1;        // MultiStream: 8; Offline: every sample in one query
  double latency_percentile = 90;   // the percentile the scenario reports
  double latency_bound_ms = 0;      // Server: the percentile must be at most this; 0: no bound
};

// The rules of `s` for `model` ("resnet50" has MLPerf's own: Offline at least 24,576 samples,
// Server p99 within 15 ms); other models get the defaults of every model.
ScenarioRules rules_for(Scenario s, const std::string& model);

}  // namespace scalebench::infer
