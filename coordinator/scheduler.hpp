#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiment/sweep.hpp"
#include "store/occupancy.hpp"
#include "store/store.hpp"

namespace scalebench {

// What the registered, alive agents offer: decides how an experiment expands (GPU or host).
ClusterShape cluster_shape(const std::vector<Store::Agent>& agents);

// A scheduling pass's view of what is busy: the runs in flight (`base`, read in place: it is as
// large as the cluster, and a pass runs at every heartbeat), what the pass placed itself, and
// agents it must leave alone (`closed`: those still stopping a run).
class BusyView {
 public:
  explicit BusyView(const Occupancy& base, const std::set<std::string>* closed = nullptr)
      : base_(base), closed_(closed) {}
  bool whole(const std::string& agent) const;
  bool gpu_busy(const std::string& agent, int gpu) const;
  bool idle(const std::string& agent) const;
  void take(const std::vector<HostPlacement>& hosts, bool gpu_run) { added_.take(hosts, gpu_run); }

 private:
  const Occupancy& base_;
  Occupancy added_;
  const std::set<std::string>* closed_;
};
// Whether `agent` may lead some run now: false when it is taken whole, or when it has GPUs and
// every one is busy (a GPU run needs at least one GPU on each node, a host run an idle node).
bool may_lead(const Store::Agent& agent, const Occupancy& busy);
// From the runs that are running or cancelling (each with its hosts).
Occupancy occupancy(const std::vector<Store::Run>& held);

// Why the run can never be placed on the registered agents (alive or lost: a lost one may come
// back): more nodes, or more GPUs per node, than they have; "" when it could be once enough of
// them are free.
std::string never_fits(const Json& spec, const std::vector<Store::Agent>& agents);

// A placement on what is free now: `nodes` distinct alive agents, each with gpus_per_node free
// GPUs (GPU runs) or nothing running at all (host runs). With a `leader`, it must be one of them
// and comes first: it starts mpirun. The other nodes are the tightest fits, so that large free
// agents stay free for large runs.
std::optional<std::vector<HostPlacement>> place(const Json& spec, const std::vector<Store::Agent>& agents,
                                                const Occupancy& busy, const std::string& leader = "");
// The same on a pass's view; `leader_agent` (the leader's entry in `agents`, when the caller has
// it) spares the search for it.
std::optional<std::vector<HostPlacement>> place(const Json& spec, const std::vector<Store::Agent>& agents,
                                                const BusyView& busy, const std::string& leader,
                                                const Store::Agent* leader_agent);

// The order runs start in: higher priority first, then submission order (run id).
void sort_queue(std::vector<Store::Run>& queued);

struct Schedule {
  std::vector<std::pair<long long, std::vector<HostPlacement>>> start;  // run id, placement (leader first)
  std::vector<std::pair<long long, std::string>> fail;                  // run id, why it can never fit
};
// One pass when agent `leader` asks for work. Runs are taken in queue order; one that can never
// fit fails at once; the first that cannot start now holds back those behind it (no backfill, so
// that a many-node run is not starved by small ones); runs that can start with `leader` as their
// first node start, and so may several at once when they fit its free GPUs.
Schedule schedule(std::vector<const Store::Run*> queued, const std::vector<Store::Agent>& agents, Occupancy busy,
                  const std::string& leader);
Schedule schedule(const std::vector<Store::Run>& queued, const std::vector<Store::Agent>& agents, Occupancy busy,
                  const std::string& leader);
// How a heartbeat's pass runs. Without `check_fits` the runs that can never fit are not looked
// for (they were at submission and at the last change of the agents) and the pass ends at the
// first run that cannot start: its cost is the runs it starts, not the queue's length.
struct PassOptions {
  bool check_fits = true;
  const Store::Agent* leader_agent = nullptr;
  const std::set<std::string>* closed = nullptr;  // agents to leave alone
};
Schedule schedule(std::vector<const Store::Run*> queued, const std::vector<Store::Agent>& agents, const Occupancy& busy,
                  const std::string& leader, const PassOptions& pass);

}  // namespace scalebench
