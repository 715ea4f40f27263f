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

struct LaunchPlan {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // for mpirun itself; forwarded to ranks with -x
};

// The command line for one run: ranks_per_node ranks of scalebench-run reading `spec_file`,
// the variant's environment forwarded, and on GPUs the assigned devices made visible. A command
// workload's run is one scalebench-run outside mpirun, which launches the program itself.
LaunchPlan plan_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                       const std::vector<int>& gpu_ids);

}  // namespace scalebench
