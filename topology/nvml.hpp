#pragma once
#include <memory>
#include <string>

#include "topology/topology.hpp"

namespace scalebench {

// NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) opened with dlopen at run time, so
// that scalebench builds and runs where there is no driver. Move-only; the destructor calls
// nvmlShutdown (when nvmlInit_v2 succeeded) and then dlclose.
class NvmlLibrary {
 public:
  // Opens `path` and calls nvmlInit_v2. Never throws: a missing library or symbol, or a failing
  // nvmlInit_v2 (no driver), leaves it not available() with the reason kept for logs.
  static NvmlLibrary open(const std::string& path = "libnvidia-ml.so.1");

  NvmlLibrary(NvmlLibrary&&) noexcept;
  NvmlLibrary& operator=(NvmlLibrary&&) noexcept;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary();

  bool available() const { return impl_ != nullptr; }
  const std::string& unavailable_reason() const { return reason_; }

  // Every GPU NVML sees, in NVML index order (all of the node's GPUs: NVML ignores
  // CUDA_VISIBLE_DEVICES; restrict_to in discover.hpp selects the ones a run used), and the path
  // between every pair. NUMA nodes are left -1 (discover_topology reads them from sysfs). A GPU
  // that NVML refuses (NVML_ERROR_NO_PERMISSION: hidden by a cgroup) is left out. Throws Error
  // (file:line, the call, NVML's message) when a call that must work fails, or when not available.
  Topology read_topology() const;

 private:
  struct Impl;
  NvmlLibrary() = default;
  std::unique_ptr<Impl> impl_;
  std::string reason_;
};

// NVML's nvmlGpuTopologyLevel_t value -> PIX, PXB, PHB, NODE or SYS (SYS for unknown values).
std::string pcie_path_kind(int nvml_topology_level);
// nvmlDeviceGetNvLinkVersion's value (an nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2,
// 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0, 8 = 6.0) -> NVLink major version; 0 when unknown.
int nvlink_major_version(unsigned int nvml_nvlink_version);

}  // namespace scalebench
