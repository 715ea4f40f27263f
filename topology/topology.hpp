#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// GPU topology of one node: what every result record carries about the GPUs it ran on, and what
// link peaks (% of peak) are computed from. docs/topology.md says where each value comes from.

// The values a GPU's description may hold (what the coordinator takes in a registration, what the
// agent sends): past them a value is no hardware's, and counts as unknown.
constexpr int kMaxGpuIndex = 4095;
constexpr long long kMaxGpuMemoryMib = 1LL << 30;  // 1 PiB
constexpr int kMaxPcieGen = 16;
constexpr int kMaxPcieWidth = 32;   // lanes: x32 is the widest link PCIe defines
constexpr int kMaxNumaNode = 1023;  // Linux has at most 1024 NUMA nodes (NODES_SHIFT 10)

// One GPU as the driver reports it. Unknown PCIe values are 0, an unknown NUMA node is -1.
struct GpuInfo {
  int index = 0;           // NVML / nvidia-smi index on the node (PCI bus order), not a CUDA ordinal
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-6f2e1c3a-..."
  std::string pci_bus_id;  // as the driver writes it: "00000000:19:00.0"
  int pcie_gen = 0;        // current link generation (many GPUs drop to Gen1 when idle)
  int pcie_gen_max = 0;    // highest generation possible with this GPU in this slot
  int pcie_width = 0;      // current lanes
  int pcie_width_max = 0;  // most lanes possible with this GPU in this slot
  int numa_node = -1;      // NUMA node of the CPU side of the GPU's PCIe link
};

// The path between two GPUs: SELF, NVLINK, or the PCIe path class as nvidia-smi topo -m names it,
// nearest first: PIX (at most one PCIe bridge), PXB (several bridges, no host bridge), PHB (a host
// bridge), NODE (host bridges of one NUMA node), SYS (across NUMA nodes).
struct Link {
  std::string kind = "SYS";
  int nvlinks = 0;                  // NVLINK: links joining the pair
  int nvlink_version = 0;           // NVLINK: major version (3 A100, 4 H100/H200, 5 B200); 0 unknown
  double nvlink_GBps_per_link = 0;  // NVLINK: GB/s per link and direction; 0 unknown
};

struct Topology {
  std::string source = "none";  // "nvml", "nvidia-smi" or "none" (no GPU, or nothing could read them)
  std::vector<GpuInfo> gpus;
  std::vector<std::vector<Link>> links;  // links[i][j]: path between gpus[i] and gpus[j]; [i][i] SELF
};

// The kinds a Link may have, nearest first.
const std::vector<std::string>& link_kinds();

// {"source", "gpus": [{index, name, uuid, pci_bus_id, pcie_gen, pcie_gen_max, pcie_width,
// pcie_width_max, numa_node}], "links": [[{"kind", and for NVLINK nvlinks, nvlink_version,
// nvlink_GBps_per_link}]]}.
Json to_json(const Topology& topology);
// The inverse of to_json; throws Error naming the first field that is missing or wrong.
Topology topology_from_json(const Json& j);

// "00000000:19:00.0", "0000:19:00.0", "19:00.0" -> "0000:19:00.0" (lower case, 4-digit domain as
// in /sys/bus/pci/devices); "" when `id` is not a PCI address.
std::string canonical_pci_bus_id(std::string_view id);

// NVLink major version of a GPU model by its name, for when only nvidia-smi is there: 3 (A100,
// A800), 4 (H100, H200, H800, H20, GH200), 5 (B100, B200, B300, GB200, GB300); 0 unknown.
int nvlink_version_for_model(std::string_view gpu_name);
// GB/s per link and direction of an NVLink major version: v1 20, v2 25, v3 25, v4 26.5625,
// v5 50; 0 when unknown.
double nvlink_GBps_per_link(int nvlink_version);
// GB/s per lane and direction of a PCIe generation (after encoding): gen1 0.25, gen2 0.5,
// gen3 0.985, gen4 1.969, gen5 3.938, gen6 7.877; 0 when unknown.
double pcie_lane_GBps(int pcie_gen);

// Per-direction peak of the host<->GPU PCIe link of `gpu`: lanes x lane rate, with the link's
// generation taken as pcie_gen_max (the current one drops at idle) and its width as pcie_width
// (the current one; each falls back to the other value when unknown). 0 when unknown.
double host_link_peak_GBps(const GpuInfo& gpu);
// Per-direction peak of the path between gpus[i] and gpus[j] (positions in topology.gpus):
// NVLINK: nvlinks x nvlink_GBps_per_link; otherwise PCIe: the lesser of both GPUs'
// host_link_peak_GBps. 0 for i == j or when unknown. Throws Error for a position out of range.
double link_peak_GBps(const Topology& topology, int i, int j);

// True when every pair of `gpus` (positions in topology.gpus) is joined by NVLink (also for
// fewer than two GPUs). Throws Error for a position out of range.
bool nvlink_joined(const Topology& topology, const std::vector<int>& gpus);

// The pair matrix as text, like nvidia-smi topo -m, for reports:
//         GPU0    GPU1    NUMA  PCIe      Name
//   GPU0   X      NV18    0     Gen5 x16  NVIDIA H200
// followed by a line naming the source and the NVLink version and per-link speed.
std::string render_matrix(const Topology& topology);

}  // namespace scalebench
