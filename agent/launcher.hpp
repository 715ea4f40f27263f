#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// Which program starts a run's ranks: Open MPI's mpirun, SLURM's srun inside an allocation
// (agent/srun_launch.hpp), or scalebench-run itself for a one-rank run (agent/local_launch.hpp).
enum class Launcher { mpirun, srun, local };

// How the agent starts a run's ranks.
struct LaunchConfig {
  Launcher launcher = Launcher::mpirun;
  std::string mpirun = "mpirun";
  std::vector<std::string> extra_args;  // site options, e.g. "--mca btl ^openib"
  std::string run_program;              // path of scalebench-run
  bool as_root = false;                 // Open MPI refuses root unless told
  std::string srun = "srun";
  std::string srun_mpi = "pmix";             // srun --mpi=: Debian's Open MPI 4.1 takes its ranks from PMIx
  std::vector<std::string> srun_extra_args;  // site options, e.g. "--partition=gpu"
  // SLURM's PMIx fence algorithm for runs' steps (SLURM_PMIX_FENCE); empty: the site's (set when
  // the agent's environment has one). See plan_srun_launch for why ring.
  std::string srun_pmix_fence = "ring";
  std::string slurm_node;  // this node's SLURM name (SLURMD_NODENAME)
  // Bind each GPU run's ranks to their GPU's NUMA node (common/rank_binding.hpp): under srun
  // with --cpu-bind/--mem-bind=map_ldom, else through SCALEBENCH_CPU_BINDING, which each
  // scalebench-run applies to itself before MPI starts. Off: no rank is pinned.
  bool bind_ranks = true;
  std::map<int, int> gpu_numa;      // this node's GPU index -> NUMA node (the agent's topology)
  std::string sysfs_root = "/sys";  // where NUMA nodes' CPU lists are read
};

// One node of a run over several nodes: the name mpirun reaches it by, the GPUs the run holds
// there (inventory indices) and their NUMA nodes as that node's agent reported them (-1 unknown;
// empty when the coordinator gave none), and its SLURM node name when its agent runs inside a
// SLURM allocation ("" otherwise). This node, which starts the launcher, is the first.
struct LaunchHost {
  std::string host;
  std::vector<int> gpus;
  std::vector<int> numa{};
  std::string slurm_node{};
};

struct LaunchPlan {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // for mpirun itself; forwarded to ranks with -x
  std::string hostfile_text;               // written to the hostfile path before launch ("" = none)
};

// The command line for one run: ranks_per_node ranks of scalebench-run reading `spec_file`,
// the variant's environment forwarded, and on GPUs the assigned devices made visible. A command
// workload's run is one scalebench-run outside mpirun, which launches the program itself.
//
// With more than one host and the srun launcher, when every host has a distinct SLURM node name,
// the run is one job step across them (plan_srun_launch with those names): SLURM places the
// tasks, and each rank finds its host in the run file by its node's name (SLURMD_NODENAME).
// Otherwise (mpirun, or a host without a SLURM name) mpirun gets `hostfile` (one line per host,
// `slots=` its ranks) and maps by slot, so ranks [k * ranks_per_node, (k + 1) * ranks_per_node)
// run on host k. Either way the ranks read the run file (`run_file_text`, with the hosts list)
// from SCALEBENCH_RUN_FILE, forwarded by the launcher, since the agent's folder is not on the
// other nodes; each rank makes its own host's GPUs visible from that list (scalebench-run does it
// before CUDA starts), since one CUDA_VISIBLE_DEVICES cannot be right on every node.
LaunchPlan plan_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                       const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts = {},
                       const std::string& hostfile = "", const std::string& run_file_text = "");

// What every rank of a run reads (SCALEBENCH_RUN_FILE or --spec): the run, its attempt and spec
// and, over several hosts, each host's GPUs, its SLURM node name when known and, when
// `bind_ranks`, the GPUs' NUMA nodes, so that each rank binds itself to its GPU's node's CPUs on
// its own host (workloads/runtime/host_binding).
Json run_file_json(long long run_id, int attempt, const Json& spec, const std::vector<LaunchHost>& hosts,
                   bool bind_ranks);

// CUDA_VISIBLE_DEVICES (and the PCI bus order the ids are in) for the run's GPUs; none for host runs.
void set_visible_devices(LaunchPlan& plan, const std::vector<int>& gpu_ids);

// SCALEBENCH_CPU_BINDING for a run on this node's `gpu_ids`, when `config` binds ranks and every
// GPU's NUMA node and CPUs are known; nothing otherwise.
void set_cpu_binding(LaunchPlan& plan, const LaunchConfig& config, const Json& run_spec,
                     const std::vector<int>& gpu_ids);

}  // namespace scalebench
