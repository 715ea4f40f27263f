#pragma once
// What an infer run measured, as a record and as a printed line, apart from the measuring. Pure:
// no CUDA.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/qps_search.hpp"
#include "workloads/infer/scenario_runner.hpp"
#include "workloads/infer/scenario_verdict.hpp"

namespace scalebench::infer {

// One scenario run judged: the run, its verdict, and (server searches) the search that chose it.
struct InferOutcome {
  ScenarioRun run;
  ScenarioResult result;
  double target_qps = 0;  // server: the rate this run was scheduled at
  std::optional<QpsSearch> search;
  std::vector<ScenarioResult> trial_results;  // server search: each trial's, in order
  double expected_samples_per_s = 0;          // the warm-up's throughput
};

// A latency summary as records hold it: {"n", "p50", "p90", "p99", "p99_9", "max"} in ms; and its
// CDF as two parallel arrays, {"percent": [...], "ms": [...]} (a few hundred bytes, where pairs
// would double the keys).
Json latency_json(const LatencySummary& l);
Json cdf_json(const LatencySummary& l);

// A Server search as records hold it: the best valid rate, whether it was bracketed, the
// tolerance, and each trial's rate and verdict with the figures `trial_figures(i)` adds.
Json search_json(const QpsSearch& search, double tolerance, const std::function<Json(std::size_t)>& trial_figures);

// The scenario's record: metric and value the scenario's figure (offline samples_per_second,
// server queries_per_second, single_stream latency_p90, multi_stream latency_p99), details the
// verdict and its reasons, the latency percentiles, queries and samples per second, the rules
// judged by and the run's own minimums, the search's trials, the engine and the check. A server
// search with no valid rate is failed, with the lowest rate's reasons.
Json infer_record(const Json& context, const InferConfig& cfg, const InferOutcome& o, int rank, const Json& engine,
                  const Json& check, long long check_wrong, long long check_rows);

// "infer resnet50 fp16 offline gpu 0: VALID 29123.4 samples/s | p50 ... p90 ... p99 ... p99.9 ... ms |
// 4 queries, 24576 samples in 10.2 s" and a line per reason.
std::string infer_summary(const Json& record);

}  // namespace scalebench::infer
