#pragma once
#include <map>
#include <string>

#include "common/json.hpp"
#include "topology/topology.hpp"

namespace scalebench {

// The per-direction peak of the path a collective's traffic took between the run's GPUs (all of
// `topology`, restricted to them beforehand), from the transports NCCL connected with: P2P
// between NVLink-joined GPUs runs at the slowest pair's NVLink peak; P2P otherwise, SHM and NET
// cross each GPU's PCIe link to the host, at the slowest GPU's PCIe peak. Returns
// {"path": "NVLINK"|"PCIe", "peak_GBps": x}, or null when it cannot be told (one GPU, no
// topology, a peak unknown).
Json path_peak(const Topology& topology, const std::map<std::string, int>& transports);

// The per-direction peak of one copy of the copy workload: GPU to GPU with peer access over the
// pair's path (NVLink or PCIe); without peer access, and host to/from GPU, over the GPU's PCIe
// link (both GPUs' for staged copies: the lesser). `src`/`dst` are positions in `topology.gpus`,
// -1 for the host. `directions` 2 doubles it (the sum of a bidirectional copy). Null if unknown.
Json copy_path_peak(const Topology& topology, int src, int dst, bool peer_access, int directions = 1);

// Puts `link` (a path_peak or copy_path_peak answer; nothing when null) on `record`, and the
// record's value as a percentage of its peak when `percent_of` names the record's metric.
void add_link_peak(Json& record, const Json& link, const std::string& percent_of = "busbw");

// Why a transport request cannot be honoured on these GPUs ("" when it can or when the topology
// is unknown): nvlink needs every pair joined by NVLink; p2p-pcie needs no pair joined by NVLink
// (P2P between NVLink-joined GPUs rides NVLink, so a PCIe-only P2P figure cannot be taken).
std::string transport_unavailable(const Topology& topology, const std::string& transport);

}  // namespace scalebench
