#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// CPU lists as Linux writes them (cpuset, sysfs, taskset -c): "0-3,8,10-11".
// Throws Error naming the text when it is not one.
std::vector<int> parse_cpu_list(std::string_view text);
// The list in that form, sorted, ranges joined: {3, 0, 1, 2, 8} -> "0-3,8".
std::string cpu_list_text(std::vector<int> cpus);

// The CPUs of NUMA node `node` (/sys/devices/system/node/nodeN/cpulist under `sysfs_root`);
// empty when unknown.
std::vector<int> numa_node_cpus(int node, const std::string& sysfs_root = "/sys");
// The NUMA nodes that hold any of `cpus`, ascending; empty when sysfs has no node folders.
std::vector<int> numa_nodes_of(const std::vector<int>& cpus, const std::string& sysfs_root = "/sys");

// The environment variable the agent hands a run's ranks their binding in: one CPU list per
// local rank, separated by ';' ("0-15;16-31"). An empty entry leaves that rank unbound.
inline constexpr const char* kCpuBindingVariable = "SCALEBENCH_CPU_BINDING";
// Binds this process to the entry of `spec` for `local_rank` (sched_setaffinity), narrowed to
// the CPUs it may use; when it may use none of them, it stays as it is and a warning says so.
// Throws Error naming the variable when the entry is malformed or has no such rank.
void apply_cpu_binding(const std::string& spec, int local_rank);
// The same from the environment, before MPI starts: SCALEBENCH_CPU_BINDING (nothing when unset)
// for the local rank the launcher gave (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; else 0).
void apply_cpu_binding_from_environment();

// What this process is bound to now, read back from the kernel (sched_getaffinity), as records
// keep it: {"cpus": "0-15", "numa_nodes": [0]}.
Json cpu_binding_read_back(const std::string& sysfs_root = "/sys");

}  // namespace scalebench
