#include "coordinator/scheduler.hpp"

#include <algorithm>
#include <tuple>

#include "experiment/sweep.hpp"

// Why the scheduler is shaped this way (docs/design.md, "Scheduling and runs over several nodes"):
// - Functions of the agents, the runs in flight and the queue, with no state of their own: the
//   coordinator never pushes work, it runs a pass when an agent heartbeats, with that agent as
//   the leader. What is busy is derived from the runs in flight each time, so no reservation can
//   outlive its run, and the unit tests call a pass without a server.
// - Strict queue order (priority, then submission), no backfill: the first run that cannot start
//   holds back the runs behind it, so that a many-node run is not starved by small ones.
// - Tightest fit first, then by name: large free agents stay free for large runs, and placements
//   are predictable.
// - A pass runs at every heartbeat over every agent: agents' info is read in place, a busy leader
//   is turned down before the others are looked at, and never_fits is asked once per run shape.
namespace scalebench {

namespace {
// The agent's info field `key` when it is an array, else an empty one (read in place: these run
// for every agent at every scheduling pass).
const Json& array_of(const Store::Agent& a, const char* key) {
  static const Json empty = Json::array();
  if (!a.info.is_object()) return empty;
  auto it = a.info.find(key);
  return it != a.info.end() && it->is_array() ? *it : empty;
}
int gpu_count(const Store::Agent& a) { return static_cast<int>(array_of(a, "gpus").size()); }
bool has_nccl(const Store::Agent& a) {
  for (const auto& c : array_of(a, "capabilities"))
    if (c == "nccl") return true;
  return false;
}
// The name other nodes' mpirun reaches this agent's node by.
std::string address_of(const Store::Agent& a) {
  std::string addr = a.info.value("address", std::string());
  return addr.empty() ? a.hostname : addr;
}
// The node's SLURM name as the agent registered it ("" outside SLURM).
std::string slurm_node_of(const Store::Agent& a) {
  if (!a.info.is_object()) return "";
  auto it = a.info.find("slurm_node");
  return it != a.info.end() && it->is_string() ? it->get<std::string>() : "";
}
// A GPU entry's inventory index: its "index", else its place in the agent's list.
int gpu_index(const Json& g, int position) { return g.is_object() ? g.value("index", position) : position; }
std::vector<int> gpu_indices(const Store::Agent& a) {
  std::vector<int> out;
  int i = 0;
  for (const auto& g : array_of(a, "gpus")) out.push_back(gpu_index(g, i++));
  return out;
}
// The NUMA node of each of `gpus` as the agent's inventory gives it; -1 where it does not.
std::vector<int> gpu_numa_nodes(const Store::Agent& a, const std::vector<int>& gpus) {
  std::vector<int> out(gpus.size(), -1);
  int i = 0;
  for (const auto& g : array_of(a, "gpus")) {
    const auto at = std::find(gpus.begin(), gpus.end(), gpu_index(g, i++));
    if (at == gpus.end() || !g.is_object()) continue;
    if (auto n = g.find("numa_node"); n != g.end() && n->is_number_integer()) out[at - gpus.begin()] = n->get<int>();
  }
  return out;
}
bool can_hold_gpus(const Store::Agent& a, int per_node) { return has_nccl(a) && gpu_count(a) >= per_node; }
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

bool BusyView::whole(const std::string& agent) const {
  return base_.whole.count(agent) || added_.whole.count(agent) || (closed_ && closed_->count(agent));
}

bool BusyView::gpu_busy(const std::string& agent, int gpu) const {
  auto in = [&](const Occupancy& o) {
    auto it = o.gpus.find(agent);
    return it != o.gpus.end() && it->second.count(gpu);
  };
  return in(base_) || in(added_);
}

bool BusyView::idle(const std::string& agent) const { return !whole(agent) && base_.idle(agent) && added_.idle(agent); }

bool may_lead(const Store::Agent& agent, const Occupancy& busy) {
  if (busy.whole.count(agent.id)) return false;
  if (busy.idle(agent.id)) return true;
  auto it = busy.gpus.find(agent.id);
  for (int g : gpu_indices(agent))
    if (!it->second.count(g)) return true;
  return false;
}

Occupancy occupancy(const std::vector<Store::Run>& held) {
  Occupancy o;
  for (const auto& r : held) {
    bool gpu = false;
    const auto hosts = held_hosts(r, &gpu);
    o.take(hosts, gpu);
  }
  return o;
}

namespace {
// Whether the run may use `agent` (its placement.agents, when it names some).
bool allowed(const Json& spec, const std::string& agent) {
  if (!spec.contains("agents") || !spec["agents"].is_array()) return true;
  for (const Json& a : spec["agents"])
    if (a.is_string() && a.get<std::string>() == agent) return true;
  return false;
}
}  // namespace

std::string never_fits(const Json& spec, const std::vector<Store::Agent>& agents) {
  const int nodes = spec.value("nodes", 1);
  const bool gpu = spec.value("gpu", false);
  const int per_node = gpus_per_node_of(spec);
  int able = 0, registered = 0;
  for (const auto& a : agents) {
    if (a.state != "alive" && a.state != "lost") continue;  // a lost agent may come back
    if (!allowed(spec, a.id)) continue;
    ++registered;
    if (!gpu || can_hold_gpus(a, per_node)) ++able;
  }
  if (able >= nodes) return "";
  const std::string of_listed = spec.contains("agents") ? " of those placement.agents names" : "";
  if (!gpu)
    return "needs " + std::to_string(nodes) + " nodes; the cluster has " + std::to_string(registered) + " agent" +
           (registered == 1 ? "" : "s") + of_listed;
  return "needs " + std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") + " with " + std::to_string(per_node) +
         " GPU" + (per_node == 1 ? "" : "s") + " each; the cluster has " + std::to_string(able) + " such node" +
         (able == 1 ? "" : "s") + of_listed;
}

std::optional<std::vector<HostPlacement>> place(const Json& spec, const std::vector<Store::Agent>& agents,
                                                const Occupancy& busy, const std::string& leader) {
  return place(spec, agents, BusyView(busy), leader, nullptr);
}

std::optional<std::vector<HostPlacement>> place(const Json& spec, const std::vector<Store::Agent>& agents,
                                                const BusyView& busy, const std::string& leader,
                                                const Store::Agent* leader_agent) {
  const int nodes = spec.value("nodes", 1);
  const bool gpu = spec.value("gpu", false);
  const int per_node = gpus_per_node_of(spec);
  struct Candidate {
    const Store::Agent* agent;
    std::vector<int> free;
  };
  // The agent as a candidate: alive and with room for one node of the run.
  auto candidate = [&](const Store::Agent& a) -> std::optional<Candidate> {
    if (a.state != "alive" || !allowed(spec, a.id)) return std::nullopt;
    if (!gpu) return busy.idle(a.id) ? std::optional<Candidate>(Candidate{&a, {}}) : std::nullopt;
    if (!can_hold_gpus(a, per_node) || busy.whole(a.id)) return std::nullopt;
    std::vector<int> free;
    for (int g : gpu_indices(a))
      if (!busy.gpu_busy(a.id, g)) free.push_back(g);
    if (static_cast<int>(free.size()) < per_node) return std::nullopt;
    return Candidate{&a, std::move(free)};
  };
  // A leader without room ends it before the others are looked at (the common answer when a
  // busy agent asks for work), and a one-node run needs no other.
  if (!leader.empty()) {
    if (!leader_agent) {
      auto it = std::find_if(agents.begin(), agents.end(), [&](const Store::Agent& a) { return a.id == leader; });
      if (it == agents.end()) return std::nullopt;
      leader_agent = &*it;
    }
    auto c = candidate(*leader_agent);
    if (!c) return std::nullopt;
    if (nodes == 1) {
      HostPlacement h{c->agent->id, address_of(*c->agent), {}};
      if (gpu) h.gpus.assign(c->free.begin(), c->free.begin() + per_node);
      return std::vector<HostPlacement>{std::move(h)};
    }
  }
  std::vector<Candidate> candidates;
  for (const auto& a : agents)
    if (auto c = candidate(a)) candidates.push_back(std::move(*c));
  if (static_cast<int>(candidates.size()) < nodes) return std::nullopt;
  // Tightest fit first (fewest free GPUs), then by name, so that placements are predictable.
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    if (x.free.size() != y.free.size()) return x.free.size() < y.free.size();
    return x.agent->id < y.agent->id;
  });
  if (!leader.empty()) {
    auto it =
        std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.agent->id == leader; });
    if (it == candidates.end()) return std::nullopt;
    std::rotate(candidates.begin(), it, it + 1);  // the leader first, the others keep their order
  }
  std::vector<HostPlacement> out;
  for (int n = 0; n < nodes; ++n) {
    const Candidate& c = candidates[static_cast<std::size_t>(n)];
    HostPlacement h{c.agent->id, address_of(*c.agent), {}};
    if (gpu) h.gpus.assign(c.free.begin(), c.free.begin() + per_node);
    if (gpu && nodes > 1) h.numa = gpu_numa_nodes(*c.agent, h.gpus);
    if (nodes > 1) h.slurm_node = slurm_node_of(*c.agent);
    out.push_back(std::move(h));
  }
  return out;
}

void sort_queue(std::vector<Store::Run>& queued) {
  std::stable_sort(queued.begin(), queued.end(), [](const Store::Run& a, const Store::Run& b) {
    const int pa = a.spec.value("priority", 0), pb = b.spec.value("priority", 0);
    if (pa != pb) return pa > pb;
    return a.id < b.id;
  });
}

Schedule schedule(const std::vector<Store::Run>& queued, const std::vector<Store::Agent>& agents, Occupancy busy,
                  const std::string& leader) {
  std::vector<const Store::Run*> runs;
  for (const auto& r : queued) runs.push_back(&r);
  return schedule(std::move(runs), agents, std::move(busy), leader);
}

Schedule schedule(std::vector<const Store::Run*> queued, const std::vector<Store::Agent>& agents, Occupancy busy,
                  const std::string& leader) {
  return schedule(std::move(queued), agents, busy, leader, PassOptions{});
}

Schedule schedule(std::vector<const Store::Run*> queued, const std::vector<Store::Agent>& agents, const Occupancy& base,
                  const std::string& leader, const PassOptions& pass) {
  BusyView busy(base, pass.closed);
  Schedule out;
  {  // sort_queue's order, each priority read once
    std::vector<std::pair<int, const Store::Run*>> keyed;
    keyed.reserve(queued.size());
    for (const Store::Run* r : queued) keyed.emplace_back(r->spec.value("priority", 0), r);
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return a.second->id < b.second->id;
    });
    for (std::size_t i = 0; i < keyed.size(); ++i) queued[i] = keyed[i].second;
  }
  bool blocked = false;
  // never_fits depends on the run's shape (and the agents it may use) only: asked once per shape.
  std::map<std::tuple<int, bool, int, std::string>, std::string> fits;
  for (const Store::Run* run : queued) {
    const Store::Run& r = *run;
    if (pass.check_fits) {
      const std::tuple<int, bool, int, std::string> shape{r.spec.value("nodes", 1), r.spec.value("gpu", false),
                                                          gpus_per_node_of(r.spec),
                                                          r.spec.contains("agents") ? r.spec["agents"].dump() : ""};
      auto known = fits.find(shape);
      if (known == fits.end()) known = fits.emplace(shape, never_fits(r.spec, agents)).first;
      if (const std::string& why = known->second; !why.empty()) {
        out.fail.emplace_back(r.id, why);
        continue;
      }
    }
    if (blocked) continue;
    auto hosts = place(r.spec, agents, busy, leader, pass.leader_agent);
    if (!hosts) {
      // A run whose placement.agents leave this leader out waits for one of its own agents, not
      // for room here: the runs behind it may start on this leader.
      if (!leader.empty() && !allowed(r.spec, leader)) continue;
      blocked = true;  // it waits for GPUs (or for another leader): so do the runs behind it
      // Past here the runs behind are only checked for never fitting, so that one the cluster
      // cannot hold fails now rather than when it reaches the front of the queue.
      if (!pass.check_fits) break;
      continue;
    }
    busy.take(*hosts, r.spec.value("gpu", false));
    out.start.emplace_back(r.id, std::move(*hosts));
  }
  return out;
}

}  // namespace scalebench
