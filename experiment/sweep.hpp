#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "experiment/spec.hpp"

namespace scalebench {

// What the cluster looks like when an experiment is expanded: GPUs or host memory only.
struct ClusterShape {
  bool gpu = false;
  int gpus_per_node = 0;      // smallest GPU count of the agents with GPUs ("all" resolves to it)
  int max_gpus_per_node = 0;  // largest: a placement over it can never run
  int ranks_per_node = 0;     // largest rank count an agent offers on host memory
};

// One point of an experiment's sweep: what one launch of scalebench-run measures.
struct RunSpec {
  int index = 0;  // position in the experiment's expansion
  std::string experiment;
  std::string workload;
  Json params = Json::object();  // fully resolved (defaults, sweep, variant; backend decided)
  std::string variant;
  int round = 1;          // 1..rounds of the experiment
  std::string transport;  // the variant's transport request ("" = none)
  std::map<std::string, std::string> env;
  Json command;  // workload command: the CommandSpec as JSON; null otherwise
  int nodes = 1;
  int ranks_per_node = 1;  // processes mpirun starts per node
  int gpus_per_node = 0;   // GPUs the run holds per node (0 on host memory); a process may drive several
  bool gpu = false;
  int repetitions = 20;
  double timeout_s = 600;
  int priority = 0;                 // the experiment's
  int retries = 0;                  // the experiment's: re-queues after an agent loss
  std::string skip_reason;          // non-empty: the run is recorded as skipped, never launched
  std::string fail_reason;          // non-empty: the run can never be placed and fails at once
  std::vector<std::string> agents;  // the agents it may be placed on (placement.agents); empty: any
};

Json to_json(const RunSpec& run);
// GPUs a stored run spec holds per node (specs from before gpus_per_node held one per process).
int gpus_per_node_of(const Json& spec);
RunSpec run_spec_from_json(const Json& j);

// Cartesian product of `matrix`, lock-step `zip`, each placement, then rounds, then each variant
// (innermost, so that paired variants run back to back: A1 B1 A2 B2 ...).
std::vector<RunSpec> expand(const Experiment& ex, const ClusterShape& shape);

}  // namespace scalebench
