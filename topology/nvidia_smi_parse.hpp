#pragma once
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace scalebench {

// Pure parsers of nvidia-smi's output, for nodes where NVML cannot be opened. Malformed input
// throws Error saying which line and column was wrong.

// The arguments that make the CSV parse_query_gpu_csv reads.
inline const std::vector<std::string> kNvidiaSmiQueryGpuArgs = {
    "--query-gpu=index,name,uuid,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
    "pcie.link.width.max",
    "--format=csv,noheader"};

// What `nvidia-smi topo -m` says about the GPUs: the GPU x GPU part of the matrix and each GPU's
// "NUMA Affinity" (-1 where it is N/A, a range, or the column is absent). NIC (or mlx5_*) rows and
// columns, the CPU affinity columns and the legend are read past. NVLINK cells carry the count
// only (nvlink_version 0, nvlink_GBps_per_link 0): the matrix does not say the version.
struct TopoMatrix {
  std::vector<std::vector<Link>> links;
  std::vector<int> numa_nodes;
};
TopoMatrix parse_topo_matrix(const std::string& text);

// One GpuInfo per line of `nvidia-smi` + kNvidiaSmiQueryGpuArgs ("0, NVIDIA H200, GPU-..,
// 00000000:19:00.0, 5, 5, 16, 16"); "[N/A]" (or "N/A") numbers become 0. Blank lines are
// skipped; any other line must have the 8 fields. Empty output is no GPU.
std::vector<GpuInfo> parse_query_gpu_csv(const std::string& csv);

// Both outputs joined into a Topology (source "nvidia-smi"): GPUs from the CSV in index order,
// NUMA nodes from topo -m, and NVLink cells completed with the version nvlink_version_for_model
// gives for the pair's GPU models (the lesser of the two). Throws Error when the two outputs do
// not list the same GPUs (count, or indices 0..n-1).
Topology parse_nvidia_smi(const std::string& topo_m, const std::string& query_gpu_csv);

}  // namespace scalebench
