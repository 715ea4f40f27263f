#include "common/rank_binding.hpp"

#include "common/cpu_binding.hpp"

namespace scalebench {

std::vector<int> rank_numa_nodes(int ranks_per_node, const std::vector<int>& gpu_ids,
                                 const std::map<int, int>& gpu_numa) {
  if (gpu_ids.empty() || ranks_per_node < 1) return {};
  auto numa_of = [&](int gpu) {
    auto it = gpu_numa.find(gpu);
    return it == gpu_numa.end() ? -1 : it->second;
  };
  std::vector<int> out;
  if (ranks_per_node == 1 && gpu_ids.size() > 1) {
    // One rank on several GPUs: bound only when they share a NUMA node.
    const int first = numa_of(gpu_ids.front());
    for (int g : gpu_ids)
      if (numa_of(g) != first) return {};
    out.push_back(first);
  } else {
    for (int r = 0; r < ranks_per_node; ++r) out.push_back(numa_of(gpu_ids[r % gpu_ids.size()]));
  }
  for (int n : out)
    if (n < 0) return {};
  return out;
}

std::string cpu_binding_spec(const std::vector<int>& rank_numa, const std::string& sysfs_root) {
  std::string spec;
  for (std::size_t r = 0; r < rank_numa.size(); ++r) {
    const std::vector<int> cpus = numa_node_cpus(rank_numa[r], sysfs_root);
    if (cpus.empty()) return "";
    spec += (r ? ";" : "") + cpu_list_text(cpus);
  }
  return spec;
}

}  // namespace scalebench
