#pragma once
// Where runs are placed and what the runs in flight hold: shared by the scheduler and the store,
// which keeps the occupancy of the runs in flight as an index.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "store/store.hpp"

namespace scalebench {

// One node of a run's placement: the agent, the name mpirun on the leader reaches that node
// by (the agent's advertised address), and the GPUs (inventory indices) the run holds there.
struct HostPlacement {
  std::string agent;
  std::string host;
  std::vector<int> gpus;
  // The NUMA node of each of `gpus` (-1 unknown), from the agent's inventory: set for runs over
  // several nodes only, whose ranks bind themselves on hosts the leading agent cannot see.
  std::vector<int> numa{};
  // The agent's SLURM node name, when it registered one: set for runs over several nodes only,
  // whose leader, inside SLURM, starts them as one srun step across these nodes.
  std::string slurm_node{};
  bool operator==(const HostPlacement&) const = default;
};
Json to_json(const std::vector<HostPlacement>& hosts);
std::vector<HostPlacement> hosts_from_json(const Json& j);

// What the runs in flight hold: GPUs per agent, and agents taken whole by host-memory runs
// (those use the node's cores and memory, so nothing shares the node with them).
struct Occupancy {
  std::map<std::string, std::set<int>> gpus;
  std::set<std::string> whole;
  void take(const std::vector<HostPlacement>& hosts, bool gpu_run);
  // What take() took (runs never share a GPU or a node taken whole).
  void release(const std::vector<HostPlacement>& hosts, bool gpu_run);
  bool idle(const std::string& agent) const;
};
// Where a run in flight holds what: its hosts, or its agent whole for a store from before
// placements; `gpu_run` false when it takes its nodes whole.
std::vector<HostPlacement> held_hosts(const Store::Run& run, bool* gpu_run);

}  // namespace scalebench
