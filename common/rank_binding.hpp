#pragma once
#include <map>
#include <string>
#include <vector>

namespace scalebench {

// Where a run's ranks on this node are bound: each local rank to the NUMA node of its GPU (the
// CPUs and memory nearest it). Ranks take the run's GPUs in order, one each, or all of them when
// a single rank drives several. `gpu_numa` maps the node's GPU indices to their NUMA nodes.
// Empty (no binding) for a host-memory run or when any GPU's NUMA node is unknown (-1, absent).
std::vector<int> rank_numa_nodes(int ranks_per_node, const std::vector<int>& gpu_ids,
                                 const std::map<int, int>& gpu_numa);

// SCALEBENCH_CPU_BINDING (common/cpu_binding.hpp) for those NUMA nodes: each local rank's CPUs,
// ';'-separated. "" when a node's CPUs cannot be read.
std::string cpu_binding_spec(const std::vector<int>& rank_numa, const std::string& sysfs_root = "/sys");

}  // namespace scalebench
