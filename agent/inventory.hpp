#pragma once
#include <string>

#include "common/json.hpp"
#include "topology/topology.hpp"

namespace scalebench {

// This node's GPUs for the coordinator, read with one discover_topology() (NVML, else
// nvidia-smi): {"gpus": gpu_inventory(...), "topology": to_json(topology)}. On a host-only node
// (or when nothing can read the GPUs) {"gpus": [], "topology": {"source": "none", ...}}.
Json read_node_gpus();
// read_node_gpus()["gpus"].
Json read_gpu_inventory();

// One object per GPU of `topology`, in its order: {index, name, uuid, pci_bus_id, memory_mib,
// driver, pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, numa_node}. memory_mib and driver
// come from `smi_gpus` (parse_gpu_csv's form) matched by uuid: null and "" when absent there.
Json gpu_inventory(const Topology& topology, const Json& smi_gpus);

// Parses nvidia-smi's CSV (--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version
// --format=csv,noheader,nounits).
Json parse_gpu_csv(const std::string& csv);

// What scalebench-run can do here: {"workloads": [...], "backends": ["mpi", "nccl"?]}.
Json read_capabilities(const std::string& run_program);

}  // namespace scalebench
