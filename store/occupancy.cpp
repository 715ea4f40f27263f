#include "store/occupancy.hpp"

namespace scalebench {

Json to_json(const std::vector<HostPlacement>& hosts) {
  Json out = Json::array();
  for (const auto& h : hosts) {
    Json j{{"agent", h.agent}, {"host", h.host}, {"gpus", h.gpus}};
    if (!h.numa.empty()) j["numa"] = h.numa;
    if (!h.slurm_node.empty()) j["slurm_node"] = h.slurm_node;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<HostPlacement> hosts_from_json(const Json& j) {
  std::vector<HostPlacement> out;
  if (!j.is_array()) return out;
  for (const auto& h : j)
    out.push_back({h.value("agent", std::string()), h.value("host", std::string()), h.value("gpus", std::vector<int>{}),
                   h.value("numa", std::vector<int>{}), h.value("slurm_node", std::string())});
  return out;
}

void Occupancy::take(const std::vector<HostPlacement>& hosts, bool gpu_run) {
  for (const auto& h : hosts) {
    if (!gpu_run) whole.insert(h.agent);
    gpus[h.agent].insert(h.gpus.begin(), h.gpus.end());
  }
}

void Occupancy::release(const std::vector<HostPlacement>& hosts, bool gpu_run) {
  for (const auto& h : hosts) {
    if (!gpu_run) whole.erase(h.agent);
    auto it = gpus.find(h.agent);
    if (it == gpus.end()) continue;
    for (int g : h.gpus) it->second.erase(g);
    if (it->second.empty()) gpus.erase(it);
  }
}

std::vector<HostPlacement> held_hosts(const Store::Run& r, bool* gpu_run) {
  auto hosts = hosts_from_json(r.hosts);
  if (hosts.empty() && !r.agent_id.empty()) hosts.push_back({r.agent_id, "", {}});  // a store from before placements
  // A GPU run recorded without its GPUs (older store) takes its agent whole: safe, not wasteful for long.
  *gpu_run = r.spec.value("gpu", false) && !hosts.empty() && !hosts.front().gpus.empty();
  return hosts;
}

bool Occupancy::idle(const std::string& agent) const {
  auto it = gpus.find(agent);
  return !whole.count(agent) && (it == gpus.end() || it->second.empty());
}

}  // namespace scalebench
