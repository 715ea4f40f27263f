#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "common/spec.hpp"

namespace scalebench {

// What the cluster looks like when an experiment is expanded: GPUs or host memory only.
struct ClusterShape {
  bool gpu = false;
  int gpus_per_node = 0;      // smallest GPU count of the agents with GPUs ("all" resolves to it)
  int max_gpus_per_node = 0;  // largest: a placement over it can never run
  int ranks_per_node = 0;  // largest rank count an agent offers on host memory
};

// One point of an experiment's sweep: what one launch of scalebench-run measures.
struct RunSpec {
  int index = 0;  // position in the experiment's expansion
  std::string experiment;
  std::string workload;
  Json params = Json::object();  // fully resolved (defaults, sweep, variant; backend decided)
  std::string variant;
  std::map<std::string, std::string> env;
  int nodes = 1;
  int ranks_per_node = 1;
  bool gpu = false;
  int repetitions = 20;
  double timeout_s = 600;
  std::string skip_reason;  // non-empty: the run is recorded as skipped, never launched
  std::string fail_reason;  // non-empty: the run can never be placed and fails at once
};

Json to_json(const RunSpec& run);
RunSpec run_spec_from_json(const Json& j);

// Cartesian product of `matrix`, lock-step `zip`, each placement, each variant (innermost, so
// that paired variants run back to back: A B A B ...).
std::vector<RunSpec> expand(const Experiment& ex, const ClusterShape& shape);

}  // namespace scalebench
