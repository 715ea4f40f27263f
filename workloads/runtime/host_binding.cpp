#include "workloads/runtime/host_binding.hpp"

#include <cstdlib>
#include <map>

#include "common/error.hpp"
#include "common/launcher_ranks.hpp"
#include "common/rank_binding.hpp"

namespace scalebench {

HostBinding host_binding(const Json& hosts, int ranks_per_node, int world_rank, int local_rank) {
  if (!hosts.is_array() || hosts.empty()) throw Error("the run file has no hosts");
  if (ranks_per_node < 1) throw Error("ranks_per_node must be at least 1");
  const int node = world_rank / ranks_per_node;
  if (world_rank < 0 || node >= static_cast<int>(hosts.size()))
    throw Error("rank " + std::to_string(world_rank) + " is outside the run's " + std::to_string(hosts.size()) +
                " hosts x " + std::to_string(ranks_per_node) + " ranks");
  if (local_rank >= 0 && local_rank != world_rank % ranks_per_node)
    throw Error("rank " + std::to_string(world_rank) + " has local rank " + std::to_string(local_rank) + ", not " +
                std::to_string(world_rank % ranks_per_node) +
                ": the launcher did not map ranks by slot over the hostfile, so GPUs cannot be assigned");
  const Json& h = hosts[static_cast<std::size_t>(node)];
  return HostBinding{node, h.value("host", std::string()), h.value("gpus", std::vector<int>{}),
                     h.value("numa", std::vector<int>{})};
}

HostBinding host_binding_by_node(const Json& hosts, int ranks_per_node, const std::string& slurm_node, int local_rank) {
  if (!hosts.is_array() || hosts.empty()) throw Error("the run file has no hosts");
  if (ranks_per_node < 1) throw Error("ranks_per_node must be at least 1");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const Json& h = hosts[i];
    if (h.value("slurm_node", std::string()) != slurm_node) continue;
    if (local_rank < 0 || local_rank >= ranks_per_node)
      throw Error("local rank " + std::to_string(local_rank) + " on SLURM node " + slurm_node + " is not one of its " +
                  std::to_string(ranks_per_node) +
                  ": the step was not laid out as planned, so GPUs cannot be assigned");
    return HostBinding{static_cast<int>(i), h.value("host", std::string()), h.value("gpus", std::vector<int>{}),
                       h.value("numa", std::vector<int>{})};
  }
  throw Error("SLURM node " + slurm_node + " is not one of the run's hosts");
}

namespace {
// Every host of the run file has its SLURM node name (a leader inside SLURM planned one step).
bool all_named(const Json& hosts) {
  for (const auto& h : hosts)
    if (!h.is_object() || !h.contains("slurm_node") || !h["slurm_node"].is_string()) return false;
  return true;
}
}  // namespace

std::optional<HostBinding> apply_host_binding(const Json& run_file) {
  if (!run_file.is_object()) return std::nullopt;  // started by hand, without a run file
  const Json hosts = run_file.value("hosts", Json::array());
  if (!hosts.is_array() || hosts.size() < 2) return std::nullopt;
  const int per_node = run_file.value("spec", Json::object()).value("ranks_per_node", 1);
  const char* slurm_node = std::getenv("SLURMD_NODENAME");
  HostBinding b;
  if (!std::getenv("OMPI_COMM_WORLD_RANK") && slurm_node && *slurm_node && all_named(hosts)) {
    // A task of an srun step (mpirun's ranks have OMPI_COMM_WORLD_RANK from the start).
    b = host_binding_by_node(hosts, per_node, slurm_node, launcher_rank({"SLURM_LOCALID"}));
  } else {
    const int rank = launcher_rank({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"});
    if (rank < 0)
      throw Error(
          "a run over several hosts needs its launcher's rank (OMPI_COMM_WORLD_RANK, PMIX_RANK or SLURM_PROCID)");
    b = host_binding(hosts, per_node, rank, launcher_local_rank());
  }
  if (!b.gpus.empty()) {
    std::string visible;
    for (int g : b.gpus) visible += (visible.empty() ? "" : ",") + std::to_string(g);
    setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
  }
  setenv("SCALEBENCH_HOST", b.host.c_str(), 1);
  setenv("SCALEBENCH_NODE", std::to_string(b.node).c_str(), 1);
  return b;
}

std::string host_cpu_binding(const HostBinding& b, int ranks_per_node, const std::string& sysfs_root) {
  if (b.numa.empty() || b.numa.size() != b.gpus.size()) return "";
  std::map<int, int> gpu_numa;
  for (std::size_t i = 0; i < b.gpus.size(); ++i) gpu_numa[b.gpus[i]] = b.numa[i];
  return cpu_binding_spec(rank_numa_nodes(ranks_per_node, b.gpus, gpu_numa), sysfs_root);
}

}  // namespace scalebench
