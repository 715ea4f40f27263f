#pragma once
#include <string>
#include <vector>

#include "agent/launcher.hpp"

namespace scalebench {

// The srun command line for one run inside a SLURM allocation: nodes x ranks_per_node ranks of
// scalebench-run as one job step on `nodes` (SLURM node names, one per placement node), wired
// up through srun's MPI plugin (--mpi=pmix by default), the variant's environment exported to
// every rank, and on GPUs the assigned devices made visible in each rank. Throws Error when the
// node list does not match the placement.
LaunchPlan plan_srun_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                            const std::vector<int>& gpu_ids, const std::vector<std::string>& nodes);

}  // namespace scalebench
