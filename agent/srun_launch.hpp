#pragma once
#include <string>
#include <vector>

#include "agent/launcher.hpp"

namespace scalebench {

// The srun command line for one run inside a SLURM allocation: nodes x ranks_per_node ranks of
// scalebench-run as one job step on `nodes` (SLURM node names, one per placement node, this one
// first), wired up through srun's MPI plugin (--mpi=pmix by default), the variant's environment
// exported to every rank.
//
// On one node the ranks read `spec_file` and get the assigned `gpu_ids` made visible. Over
// several, the agent's folder is not on the other nodes: the ranks read the run file
// (`run_file_text`, with each host's GPUs and SLURM node name) from SCALEBENCH_RUN_FILE, which
// srun exports, and each rank makes its own host's GPUs visible from it (scalebench-run, before
// CUDA starts). SLURM lays the tasks out in its own node order, not the list's, so ranks find
// their host by name, not by rank. Throws Error when the node list does not match the placement,
// a name is missing or repeated, or a run over several nodes has no run file.
LaunchPlan plan_srun_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                            const std::vector<int>& gpu_ids, const std::vector<std::string>& nodes,
                            const std::string& run_file_text = "");

}  // namespace scalebench
