#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "topology/topology.hpp"
#include "workloads/bootstrap/mpi_session.hpp"

namespace scalebench {

// Where a run ran and on what: every rank's host and device, gathered to all ranks, plus the
// versions of the software stack. Stored with every record so that a figure can be reproduced.
struct RunEnvironment {
  Json placement;    // nodes, ranks, ranks_per_node, gpus, hosts, devices[]
  Json environment;  // hostnames, gpu_models, driver, CUDA, NCCL, cuDNN, MPI, scalebench, git
};

// `devices` holds "name|uuid|pci" of each GPU this process drives (several when one process runs
// several GPUs), empty on host memory. Devices are numbered in rank order, then in list order.
RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::vector<std::string>& devices, const Json& gpu_versions);

// The same for a run on this node that holds no MPI session (the command workload, which starts
// a program of its own): `ranks` processes on the GPUs of `gpus` (dealt out in order), whose
// topology joins the environment.
RunEnvironment capture_local_environment(int ranks, const Topology& gpus, const std::string& backend);

// The links between the run's GPUs on the lead's host (in rank order), read from NVML or
// nvidia-smi: what every GPU record carries as environment.topology.
Topology placement_topology(const Json& placement);

}  // namespace scalebench
