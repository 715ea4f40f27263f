#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace scalebench {

// Where discover_topology looks; the defaults are the real ones, tests point them elsewhere.
struct DiscoverOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string nvidia_smi = "nvidia-smi";
  std::string sysfs_root = "/sys";
  std::chrono::milliseconds nvidia_smi_timeout{10000};  // per nvidia-smi call
};

// This node's GPU topology: through NVML, else by parsing nvidia-smi (topo -m and --query-gpu),
// else empty with source "none". NUMA nodes that the source leaves unknown are read from sysfs.
// Never throws: what failed is logged, and the next source is tried.
Topology discover_topology(const DiscoverOptions& options = {});

// The part of `topology` a run used, in the order given: each id is a PCI bus id in any of the
// usual spellings ("00000000:19:00.0", "0000:19:00.0", as cudaDeviceGetPCIBusId writes it) or a
// UUID ("GPU-..."). GpuInfo::index keeps the node's index; links follow the new order. Throws
// Error naming an id that matches no GPU, or one given twice.
Topology restrict_to(const Topology& topology, const std::vector<std::string>& pci_bus_ids_or_uuids);

// The topology of the GPUs a run used (restrict_to over discover_topology()). Never throws: ids
// that match no GPU leave the topology unknown (source "none"), with the reason logged.
Topology discover_devices(const std::vector<std::string>& pci_bus_ids_or_uuids);

// /sys/bus/pci/devices/<0000:19:00.0>/numa_node under `sysfs_root`; -1 when absent, unreadable,
// or -1 there (a single-node machine).
int read_pci_numa_node(const std::string& pci_bus_id, const std::string& sysfs_root = "/sys");

}  // namespace scalebench
