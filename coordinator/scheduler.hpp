#pragma once
#include <optional>
#include <vector>

#include "common/sweep.hpp"
#include "coordinator/store.hpp"

namespace scalebench {

// What the registered, alive agents offer: decides how an experiment expands (GPU or host).
ClusterShape cluster_shape(const std::vector<Store::Agent>& agents);

// Whether an agent can take a run: enough GPUs for a GPU run; any agent for a host run.
bool fits(const Store::Run& run, const Store::Agent& agent);

// The oldest queued run (submission order) that fits the agent.
std::optional<Store::Run> pick_run(const std::vector<Store::Run>& queued, const Store::Agent& agent);

}  // namespace scalebench
