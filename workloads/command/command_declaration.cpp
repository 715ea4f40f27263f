// The command workload's declaration in the registry (catalog/registry.hpp): any
// program, its parameters free (whatever its arguments use). Host-only.
#include "catalog/registry.hpp"

namespace scalebench {

WorkloadDef command_declaration() {
  WorkloadDef d;
  d.name = "command";
  d.help =
      "any program (nccl-tests, a PyTorch script, ...) launched on the run's GPUs; its figures read from its "
      "output (the experiment's `command:` block, docs/command.md)";
  d.free_params = true;
  d.outside_mpi = true;
  return d;
}

}  // namespace scalebench
