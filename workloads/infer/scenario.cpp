#include "workloads/infer/scenario.hpp"

#include <array>

#include "common/error.hpp"

namespace scalebench::infer {

namespace {
constexpr std::array<Scenario, 4> kScenarios = {Scenario::offline, Scenario::server, Scenario::single_stream,
                                                Scenario::multi_stream};
}

const std::vector<std::string>& scenario_names() {
  static const std::vector<std::string> names = {"offline", "server", "single_stream", "multi_stream"};
  return names;
}

std::string scenario_name(Scenario s) { return scenario_names().at(static_cast<std::size_t>(s)); }

Scenario parse_scenario(const std::string& name) {
  for (Scenario s : kScenarios)
    if (scenario_name(s) == name) return s;
  std::string choices;
  for (const auto& n : scenario_names()) choices += (choices.empty() ? "" : ", ") + n;
  throw Error("scenario '" + name + "': expected one of " + choices);
}

ScenarioRules rules_for(Scenario s, const std::string& model) {
  ScenarioRules r;
  const bool resnet50 = model == "resnet50";
  switch (s) {
    case Scenario::offline:
      // One query of every sample: its count is the minimum, and latency is not judged.
      r.min_queries = 1;
      r.samples_per_query = resnet50 ? 24576 : 1;
      r.latency_percentile = 90;
      break;
    case Scenario::server:
      r.latency_percentile = 99;
      r.latency_bound_ms = resnet50 ? 15 : 10;
      break;
    case Scenario::single_stream:
      r.latency_percentile = 90;
      break;
    case Scenario::multi_stream:
      r.min_queries = 662;
      r.samples_per_query = 8;
      r.latency_percentile = 99;
      break;
  }
  return r;
}

}  // namespace scalebench::infer
