#include "coordinator/scheduler.hpp"

#include <algorithm>

#include "common/sweep.hpp"

namespace scalebench {

namespace {
int gpu_count(const Store::Agent& a) { return static_cast<int>(a.info.value("gpus", Json::array()).size()); }
bool has_nccl(const Store::Agent& a) {
  for (const auto& c : a.info.value("capabilities", Json::array()))
    if (c == "nccl") return true;
  return false;
}
}  // namespace

ClusterShape cluster_shape(const std::vector<Store::Agent>& agents) {
  ClusterShape s;
  for (const auto& a : agents) {
    if (a.state != "alive") continue;
    s.ranks_per_node = std::max(s.ranks_per_node, a.info.value("slots", 1));
    int g = gpu_count(a);
    if (g > 0 && has_nccl(a)) {
      s.gpus_per_node = s.gpu ? std::min(s.gpus_per_node, g) : g;
      s.max_gpus_per_node = std::max(s.max_gpus_per_node, g);
      s.gpu = true;
    }
  }
  return s;
}

bool fits(const Store::Run& run, const Store::Agent& agent) {
  if (agent.state != "alive") return false;
  if (run.spec.value("nodes", 1) != 1) return false;
  if (!run.spec.value("gpu", false)) return true;
  return has_nccl(agent) && gpu_count(agent) >= gpus_per_node_of(run.spec);
}

std::optional<Store::Run> pick_run(const std::vector<Store::Run>& queued, const Store::Agent& agent) {
  for (const auto& r : queued)
    if (fits(r, agent)) return r;
  return std::nullopt;
}

}  // namespace scalebench
