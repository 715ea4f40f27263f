#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// Where a rank of a run over several nodes is: the run's node (index into the run file's hosts
// list), that host's name, the GPUs the run holds there (inventory indices) and their NUMA nodes
// when the run file gives them (ranks are bound).
struct HostBinding {
  int node = 0;
  std::string host;
  std::vector<int> gpus;
  std::vector<int> numa;
};

// The launcher maps ranks by slot, ranks_per_node per host in the order of `hosts`, so rank r is
// on host r / ranks_per_node with local rank r % ranks_per_node. Throws Error when the launcher's
// own local rank disagrees (the job was not mapped as planned: GPUs would be wrong) or the rank
// is outside the hosts.
HostBinding host_binding(const Json& hosts, int ranks_per_node, int world_rank, int local_rank);

// A rank of one srun step across the hosts: SLURM lays the tasks out in its own node order, not
// the run file's, so the rank's host is the one whose "slurm_node" is the node it runs on
// (`slurm_node`, SLURMD_NODENAME). Throws Error when no host has that name or `local_rank`
// (SLURM_LOCALID) is not under ranks_per_node (the step was not laid out as planned).
HostBinding host_binding_by_node(const Json& hosts, int ranks_per_node, const std::string& slurm_node, int local_rank);

// For scalebench-run before MPI and CUDA start: when the run file lists several hosts, finds
// this rank's and sets CUDA_VISIBLE_DEVICES to its GPUs, SCALEBENCH_HOST to its name and
// SCALEBENCH_NODE to its index. Under mpirun (OMPI_COMM_WORLD_RANK) by the rank, mapped by slot;
// under srun, when every host has its SLURM node name, by SLURMD_NODENAME; else by the launcher's
// rank (PMIx's or Slurm's). Returns the binding, or nothing for a run on one node. Throws Error
// with the reason.
std::optional<HostBinding> apply_host_binding(const Json& run_file);

// SCALEBENCH_CPU_BINDING for the ranks on `b`'s host (common/rank_binding.hpp), from its GPUs'
// NUMA nodes and the CPU lists under `sysfs_root` of the host this runs on: "" when the run is not
// bound or a NUMA node or its CPUs are unknown.
std::string host_cpu_binding(const HostBinding& b, int ranks_per_node, const std::string& sysfs_root = "/sys");

}  // namespace scalebench
