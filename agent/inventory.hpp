#pragma once
#include <string>

#include "common/json.hpp"

namespace scalebench {

// The GPUs of this node as nvidia-smi reports them ([] on a host-only node, or when nvidia-smi
// is missing or fails), each {index, name, uuid, pci_bus_id, memory_mib, driver}.
Json read_gpu_inventory();
// Parses nvidia-smi's CSV (--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version
// --format=csv,noheader,nounits).
Json parse_gpu_csv(const std::string& csv);

// What scalebench-run can do here: {"workloads": [...], "backends": ["mpi", "nccl"?]}.
Json read_capabilities(const std::string& run_program);

}  // namespace scalebench
