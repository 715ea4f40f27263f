#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/bootstrap/mpi_session.hpp"

namespace scalebench {

// Where a run ran and on what: every rank's host and device, gathered to all ranks, plus the
// versions of the software stack. Stored with every record so that a figure can be reproduced.
struct RunEnvironment {
  Json placement;    // nodes, ranks, ranks_per_node, gpus, hosts, devices[]
  Json environment;  // hostnames, gpu_models, driver, CUDA, NCCL, cuDNN, MPI, scalebench, git
};

// `device_description` is "name|uuid|pci" of this rank's GPU, or "" on host memory.
RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::string& device_description, const Json& gpu_versions);

}  // namespace scalebench
