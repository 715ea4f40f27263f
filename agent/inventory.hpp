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

// The GPUs of `gpus` (gpu_inventory's form, in PCI bus order) that CUDA_VISIBLE_DEVICES leaves
// visible, read as CUDA reads it with CUDA_DEVICE_ORDER=PCI_BUS_ID: unset (null) keeps them all,
// "" none; each entry is an ordinal or a GPU UUID or a unique prefix of one ("GPU-8f1c"); like
// CUDA, an entry that names no GPU (or a MIG instance) ends the list. `ignored` gets the entries
// left out, for a warning.
Json visible_gpus(const Json& gpus, const char* cuda_visible_devices, std::string* ignored = nullptr);

// What scalebench-run can do here: {"workloads": [...], "backends": ["mpi", "nccl"?]}.
Json read_capabilities(const std::string& run_program);

}  // namespace scalebench
