#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "experiment/command_spec.hpp"
#include "workloads/runtime/launch_options.hpp"

namespace scalebench {

// One process the command workload starts, with the variables it adds to the environment.
struct CommandProcess {
  int rank = 0;  // torchrun's RANK for launch ranks; 0 otherwise
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};

// The values of a run's {placeholders}: its parameters (sizes as bytes, booleans as true/false)
// and the built-ins (gpus, gpus_per_node, nodes, ranks, ranks_per_node, variant, round,
// repetitions, run_id, output_dir, master_addr, master_port, node_rank).
std::map<std::string, std::string> command_vars(const Json& run_spec, long long run_id, const std::string& output_dir,
                                                const std::string& master_addr, int master_port);

// The processes of one run: launch mpi is one mpirun of `ranks` copies of the program (with the
// variables of `forward` passed to every rank); launch ranks is `ranks` processes with torchrun's
// variables; launch once is one process with MASTER_ADDR/PORT, NODE_RANK and NNODES. Throws Error
// for a placeholder without value.
std::vector<CommandProcess> plan_command(const CommandSpec& command, const std::map<std::string, std::string>& vars,
                                         int ranks, const std::vector<std::string>& forward,
                                         const MpirunOptions& mpirun);

}  // namespace scalebench
