// NvmlLibrary::read_telemetry: power, SM clock, utilisation, memory, PCIe and NVLink traffic of
// every GPU, each read with the call NVML documents for it.
#include <cstring>

#include "common/error.hpp"
#include "topology/nvml.hpp"
#include "topology/nvml_abi.hpp"
#include "topology/nvml_impl.hpp"

namespace scalebench {

namespace abi = nvml_abi;

namespace {

// A field value as an unsigned 64-bit count, whatever type NVML chose to return it in.
std::optional<unsigned long long> field_count(const nvmlFieldValue_t& f) {
  if (f.nvmlReturn != abi::kSuccess) return std::nullopt;
  switch (f.valueType) {
    case abi::kValueUnsignedInt:
      return f.value.uiVal;
    case abi::kValueUnsignedLong:
      return f.value.ulVal;
    case abi::kValueUnsignedLongLong:
      return f.value.ullVal;
    case abi::kValueSignedLongLong:
      return f.value.sllVal >= 0 ? std::optional<unsigned long long>(f.value.sllVal) : std::nullopt;
    case abi::kValueSignedInt:
      return f.value.siVal >= 0 ? std::optional<unsigned long long>(f.value.siVal) : std::nullopt;
    case abi::kValueUnsignedShort:
      return f.value.usVal;
    case abi::kValueDouble:
      return f.value.dVal >= 0 ? std::optional<unsigned long long>(static_cast<unsigned long long>(f.value.dVal))
                               : std::nullopt;
    default:
      return std::nullopt;
  }
}

// The power and thermal violation counters (ns) of one GPU, each left empty where NVML does not
// offer it; returns NVML's timestamp of the power reading (µs), 0 without one. A template so that
// it takes NvmlLibrary's private Impl without naming it.
template <class Nvml>
long long read_violations(const Nvml& n, nvmlDevice_t d, std::optional<unsigned long long>& power_ns,
                          std::optional<unsigned long long>& thermal_ns) {
  if (!n.nvmlDeviceGetViolationStatus) return 0;
  long long timestamp_us = 0;
  nvmlViolationTime_t v{};
  if (n.nvmlDeviceGetViolationStatus(d, abi::kPerfPolicyPower, &v) == abi::kSuccess) {
    power_ns = v.violationTime;
    timestamp_us = static_cast<long long>(v.referenceTime);
  }
  if (n.nvmlDeviceGetViolationStatus(d, abi::kPerfPolicyThermal, &v) == abi::kSuccess) thermal_ns = v.violationTime;
  return timestamp_us;
}

// A GPU's power draw and SM clock, each left empty where the driver does not offer it.
template <class Nvml>
NvmlClockPower clock_power(const Nvml& n, nvmlDevice_t d) {
  NvmlClockPower out;
  unsigned int v = 0;
  if (n.nvmlDeviceGetPowerUsage && n.nvmlDeviceGetPowerUsage(d, &v) == abi::kSuccess) out.power_mw = v;
  if (n.nvmlDeviceGetClockInfo && n.nvmlDeviceGetClockInfo(d, abi::kClockSm, &v) == abi::kSuccess) out.sm_clock_mhz = v;
  return out;
}

// The GPU with this UUID; an Error naming it when NVML has none. A template so that it takes
// NvmlLibrary's private Impl without naming it.
template <class Nvml>
nvmlDevice_t device_by_uuid(const Nvml& n, const std::string& uuid) {
  if (!n.nvmlDeviceGetHandleByUUID) throw Error("NVML lacks nvmlDeviceGetHandleByUUID");
  nvmlDevice_t d = nullptr;
  n.check(n.nvmlDeviceGetHandleByUUID(uuid.c_str(), &d), ("nvmlDeviceGetHandleByUUID(" + uuid + ")").c_str(), __FILE__,
          __LINE__);
  return d;
}

}  // namespace

std::vector<NvmlGpuReading> NvmlLibrary::read_telemetry() const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  unsigned int count = 0;
  NVML_CHECK(n, nvmlDeviceGetCount_v2(&count));
  std::vector<NvmlGpuReading> out;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    nvmlReturn_t rc = n.nvmlDeviceGetHandleByIndex_v2(i, &d);
    if (rc == abi::kErrorNoPermission) continue;  // hidden by a cgroup, as in read_topology
    n.check(rc, ("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ")").c_str(), __FILE__, __LINE__);
    NvmlGpuReading r;
    r.index = static_cast<int>(i);
    char name[abi::kNameBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetName(d, name, abi::kNameBufferSize));
    char uuid[abi::kUuidBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetUUID(d, uuid, abi::kUuidBufferSize));
    r.name.assign(name, strnlen(name, sizeof name));
    r.uuid.assign(uuid, strnlen(uuid, sizeof uuid));
    nvmlPciInfo_t pci{};
    if (n.nvmlDeviceGetPciInfo_v3 && n.nvmlDeviceGetPciInfo_v3(d, &pci) == abi::kSuccess)
      r.pci_bus_id.assign(pci.busId, strnlen(pci.busId, sizeof pci.busId));

    const NvmlClockPower now = clock_power(n, d);
    r.power_mw = now.power_mw;
    r.sm_clock_mhz = now.sm_clock_mhz;
    unsigned int v = 0;
    nvmlUtilization_t util{};
    if (n.nvmlDeviceGetUtilizationRates && n.nvmlDeviceGetUtilizationRates(d, &util) == abi::kSuccess) {
      r.gpu_utilization_pct = util.gpu;
      r.memory_utilization_pct = util.memory;
    }
    nvmlMemory_t mem{};
    if (n.nvmlDeviceGetMemoryInfo && n.nvmlDeviceGetMemoryInfo(d, &mem) == abi::kSuccess) {
      r.memory_used_bytes = mem.used;
      r.memory_total_bytes = mem.total;
    }
    if (n.nvmlDeviceGetPcieThroughput) {
      if (n.nvmlDeviceGetPcieThroughput(d, abi::kPcieUtilTxBytes, &v) == abi::kSuccess) r.pcie_tx_kBps = v;
      if (n.nvmlDeviceGetPcieThroughput(d, abi::kPcieUtilRxBytes, &v) == abi::kSuccess) r.pcie_rx_kBps = v;
    }
    if (n.nvmlDeviceGetFieldValues) {
      // Both directions in one call, so that they share one timestamp. A GPU without NVLink
      // answers NOT_SUPPORTED in each value's own nvmlReturn.
      nvmlFieldValue_t f[2] = {};
      f[0].fieldId = abi::kFieldNvLinkThroughputDataTx;
      f[1].fieldId = abi::kFieldNvLinkThroughputDataRx;
      f[0].scopeId = f[1].scopeId = abi::kScopeAllLinks;
      if (n.nvmlDeviceGetFieldValues(d, 2, f) == abi::kSuccess) {
        r.nvlink_tx_kib = field_count(f[0]);
        r.nvlink_rx_kib = field_count(f[1]);
        r.nvlink_timestamp_us = f[0].timestamp;
      }
    }
    r.capped_timestamp_us = read_violations(n, d, r.power_capped_ns, r.thermal_capped_ns);
    out.push_back(std::move(r));
  }
  return out;
}

NvmlClockLimits NvmlLibrary::read_clock_limits(const std::string& uuid) const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  const nvmlDevice_t d = device_by_uuid(n, uuid);
  NvmlClockLimits out;
  read_violations(n, d, out.power_capped_ns, out.thermal_capped_ns);
  return out;
}

NvmlClockPower NvmlLibrary::read_clock_power(const std::string& uuid) const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  const nvmlDevice_t d = device_by_uuid(n, uuid);
  return clock_power(n, d);
}

}  // namespace scalebench
