#include "workloads/infer/scenario_verdict.hpp"

#include <algorithm>

#include "record/table_printer.hpp"

namespace scalebench::infer {

namespace {

// The minimums every scenario has: duration and query count (Offline: its samples).
void check_minimums(Scenario scenario, const ScenarioRules& rules, const RunTally& run, ScenarioResult& out) {
  if (run.duration_s < rules.min_duration_s)
    out.reasons.push_back("ran " + fixed_number(run.duration_s, 1) + " s, under the " +
                          fixed_number(rules.min_duration_s, 0) + " s minimum");
  if (scenario == Scenario::offline) {
    const std::uint64_t min_samples = static_cast<std::uint64_t>(rules.samples_per_query);
    if (run.samples < min_samples)
      out.reasons.push_back("completed " + std::to_string(run.samples) + " samples, under the " +
                            std::to_string(min_samples) + " minimum");
  } else if (run.queries < rules.min_queries) {
    out.reasons.push_back("completed " + std::to_string(run.queries) + " queries, under the " +
                          std::to_string(rules.min_queries) + " minimum");
  }
}

}  // namespace

ScenarioResult judge(Scenario scenario, const ScenarioRules& rules, const RunTally& run) {
  ScenarioResult out;
  out.latency = summarize_latencies(run.latencies_ms);
  if (!run.latencies_ms.empty()) {
    std::vector<double> sorted = run.latencies_ms;
    std::sort(sorted.begin(), sorted.end());
    out.reported_latency_ms = percentile(sorted, rules.latency_percentile);
  }
  if (run.duration_s > 0) {
    out.samples_per_second = static_cast<double>(run.samples) / run.duration_s;
    out.queries_per_second = static_cast<double>(run.queries) / run.duration_s;
  }
  check_minimums(scenario, rules, run, out);
  const bool late = rules.latency_bound_ms > 0 && out.reported_latency_ms > rules.latency_bound_ms;
  const bool none = run.latencies_ms.empty() && scenario != Scenario::offline;
  out.within_bound = !late && !none && run.gave_up.empty();
  if (!run.gave_up.empty()) out.reasons.push_back(run.gave_up);
  if (late)
    out.reasons.push_back("p" + fixed_number(rules.latency_percentile, 0) + " latency " +
                          fixed_number(out.reported_latency_ms, 2) + " ms, over the " +
                          fixed_number(rules.latency_bound_ms, 0) + " ms bound");
  if (none) out.reasons.push_back("no query completed");
  switch (scenario) {
    case Scenario::offline:
      out.figure = out.samples_per_second, out.figure_unit = "samples/s";
      break;
    case Scenario::server:
      out.figure = run.scheduled_qps, out.figure_unit = "queries/s";
      break;
    case Scenario::single_stream:
    case Scenario::multi_stream:
      out.figure = out.reported_latency_ms, out.figure_unit = "ms";
      break;
  }
  out.valid = out.reasons.empty();
  return out;
}

}  // namespace scalebench::infer
