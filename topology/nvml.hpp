#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace scalebench {

// One GPU's telemetry at one moment, in NVML's own units. A quantity that the GPU or the driver
// does not offer (NVML_ERROR_NOT_SUPPORTED, an entry point the library lacks) is left empty.
struct NvmlGpuReading {
  int index = 0;  // NVML index
  std::string uuid, name;
  std::string pci_bus_id;                    // nvmlDeviceGetPciInfo_v3 busId: "00000000:19:00.0" ("" when unread)
  std::optional<unsigned int> power_mw;      // nvmlDeviceGetPowerUsage
  std::optional<unsigned int> sm_clock_mhz;  // nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
  std::optional<unsigned int> gpu_utilization_pct;                          // nvmlDeviceGetUtilizationRates .gpu
  std::optional<unsigned int> memory_utilization_pct;                       // .memory (memory controller busy)
  std::optional<unsigned long long> memory_used_bytes, memory_total_bytes;  // nvmlDeviceGetMemoryInfo
  std::optional<unsigned int> pcie_tx_kBps, pcie_rx_kBps;  // nvmlDeviceGetPcieThroughput: KB/s over 20 ms
  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_{TX,RX} over all links: cumulative KiB of payload (a rate
  // needs two readings), with NVML's timestamp of the values (microseconds since 1970).
  std::optional<unsigned long long> nvlink_tx_kib, nvlink_rx_kib;
  long long nvlink_timestamp_us = 0;
  // nvmlDeviceGetViolationStatus (power, thermal): cumulative ns the clocks were held below the
  // application clocks by that limit, with NVML's timestamp of the power reading (microseconds).
  std::optional<unsigned long long> power_capped_ns, thermal_capped_ns;
  long long capped_timestamp_us = 0;
};

// How long a GPU's clocks have been held down, as NVML counts it since the driver loaded
// (nvmlDeviceGetViolationStatus: nanoseconds below the application clocks because of the power
// limit, or the thermal one). What the GPU or driver does not offer is left empty.
struct NvmlClockLimits {
  std::optional<unsigned long long> power_capped_ns, thermal_capped_ns;
};

// One GPU's SM clock and power draw, which a load watches while it runs.
struct NvmlClockPower {
  std::optional<unsigned int> sm_clock_mhz, power_mw;
};

// One GPU's configuration and health as nodecheck reads it (topology/nvml_health.cpp). What
// the GPU or driver does not offer is left empty.
// NVLink data-link error counters of one GPU, summed over its links. Kept apart because they weigh
// differently: a replay or a recovery is a link fault, while CRC errors matter only at a high rate.
struct NvLinkErrorCounts {
  unsigned long long replay = 0, recovery = 0, crc = 0;  // crc: flit + data
};

struct NvmlGpuHealth {
  int index = 0;
  std::string uuid, name, pci_bus_id;
  std::optional<bool> persistence_mode;                   // nvmlDeviceGetPersistenceMode
  std::optional<bool> ecc_enabled, ecc_enabled_pending;   // nvmlDeviceGetEccMode: current, after reboot
  std::optional<bool> retired_pages_pending;              // nvmlDeviceGetRetiredPagesPendingStatus (pre-A100)
  std::optional<unsigned int> remapped_rows_correctable;  // nvmlDeviceGetRemappedRows (A100 and later)
  std::optional<unsigned int> remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failure;
  std::optional<unsigned int> power_limit_mw, default_power_limit_mw;  // enforced, and the board's default
  std::optional<unsigned int> max_sm_clock_mhz, applications_sm_clock_mhz;
  int pcie_gen = 0, pcie_gen_max = 0, pcie_width = 0, pcie_width_max = 0;  // 0: unknown
  int nvlinks = 0, nvlinks_up = 0;                 // links that answer nvmlDeviceGetNvLinkState, and those active
  std::optional<unsigned int> nvlink_speed_mbps;   // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
  std::optional<NvLinkErrorCounts> nvlink_errors;  // nvmlDeviceGetNvLinkErrorCounter, summed over links
};

// The node-wide part: versions of the driver and the CUDA it supports.
struct NvmlSystemInfo {
  std::string driver_version;   // "" unknown
  int cuda_driver_version = 0;  // 12040 = 12.4; 0 unknown
};

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

  // Telemetry of every GPU NVML sees (topology/nvml_telemetry.cpp), in NVML index order; GPUs
  // NVML refuses (no permission) are left out. Throws Error when not available, or when the GPUs
  // cannot be listed; a single quantity that cannot be read is left empty instead.
  std::vector<NvmlGpuReading> read_telemetry() const;

  // The clock limits of the GPU with this UUID ("GPU-..."; topology/nvml_telemetry.cpp). Throws
  // Error when not available or no GPU has the UUID; a quantity that cannot be read is left empty.
  NvmlClockLimits read_clock_limits(const std::string& uuid) const;
  // The clock and power of the GPU with this UUID: two quick calls, where read_telemetry reads
  // every GPU and spends about 20 ms on each one's PCIe counters.
  NvmlClockPower read_clock_power(const std::string& uuid) const;

  // Configuration and health of every GPU NVML sees (topology/nvml_health.cpp), in index order;
  // GPUs NVML refuses are left out. Throws Error when not available or the GPUs cannot be listed.
  std::vector<NvmlGpuHealth> read_health() const;
  NvmlSystemInfo read_system() const;

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
