#pragma once
#include <set>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "topology/topology.hpp"
#include "workloads/runtime/mpi_session.hpp"

namespace scalebench {

// Where a run ran and on what: every rank's host and device, gathered to all ranks, plus the
// versions of the software stack. Stored with every record so that a figure can be reproduced.
struct RunEnvironment {
  Json placement;    // nodes, ranks, ranks_per_node, gpus, hosts, devices[]
  Json environment;  // hostnames, gpu_models, driver, CUDA, NCCL, cuDNN, MPI, scalebench, git
};

// One GPU a process drives, as the records name it.
struct DeviceId {
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-..." as NVML and nvidia-smi write it
  std::string pci_bus_id;  // "0000:19:00.0"
};

// `devices`: each GPU this process drives (several when one process runs several GPUs), none on
// host memory. Devices are numbered in rank order, then in list order.
RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::vector<DeviceId>& devices, const Json& gpu_versions);

// What one rank tells the others in capture_environment: its host, local rank, the CPUs it is
// bound to and their NUMA nodes (`bound`, as cpu_binding_read_back gives them) and its devices.
Json rank_entry(const std::string& host, int local_rank, const Json& bound, const std::vector<DeviceId>& devices);

// Every rank's entry, in rank order, merged: placement.devices[] (a device per GPU, or one entry
// for a rank without any), the hosts in order of first appearance, each rank's binding, the GPU
// models and the GPU count.
struct GatheredRanks {
  Json devices = Json::array();
  Json binding = Json::array();
  std::vector<std::string> hosts;
  std::set<std::string> models;
  int gpus = 0;
};
GatheredRanks merge_rank_entries(const std::vector<Json>& entries);

// The same for a run on this node that holds no MPI session (the command workload, which starts
// a program of its own): `ranks` processes on the GPUs of `gpus` (dealt out in order), whose
// topology joins the environment.
RunEnvironment capture_local_environment(int ranks, const Topology& gpus, const std::string& backend);

// The links between the run's GPUs on the lead's host (in rank order), read from NVML or
// nvidia-smi: what every GPU record carries as environment.topology.
Topology placement_topology(const Json& placement);

}  // namespace scalebench
