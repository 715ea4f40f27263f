#pragma once
#include <string>
#include <vector>

#include "agent/launcher.hpp"

namespace scalebench {

// The command line for a one-rank run started directly, without mpirun or srun: scalebench-run
// itself (an MPI singleton) with the variant's environment and the assigned GPUs visible. For
// nodes without a working mpirun. Throws Error for a run of more than one rank.
LaunchPlan plan_local_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                             const std::vector<int>& gpu_ids);

}  // namespace scalebench
