#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// How the agent starts a run's ranks. `mpirun` here; srun and multi-node hostfiles build on it.
struct LaunchConfig {
  std::string mpirun = "mpirun";
  std::vector<std::string> extra_args;  // site options, e.g. "--mca btl ^openib"
  std::string run_program;              // path of scalebench-run
  bool as_root = false;                 // Open MPI refuses root unless told
};

// One node of a run over several nodes: the name mpirun reaches it by and the GPUs the run
// holds there (inventory indices). This node, which starts mpirun, is the first.
struct LaunchHost {
  std::string host;
  std::vector<int> gpus;
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
// With more than one host, mpirun gets `hostfile` (one line per host, `slots=` its ranks) and
// maps by slot, so ranks [k * ranks_per_node, (k + 1) * ranks_per_node) run on host k. The ranks
// read the run file (`run_file_text`, with the hosts list) from SCALEBENCH_RUN_FILE, forwarded
// by mpirun, since the agent's folder is not on the other nodes; each rank makes its own host's
// GPUs visible from that list (scalebench-run does it before CUDA starts), since one
// CUDA_VISIBLE_DEVICES cannot be right on every node.
LaunchPlan plan_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                       const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts = {},
                       const std::string& hostfile = "", const std::string& run_file_text = "");

}  // namespace scalebench
