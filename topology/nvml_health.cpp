// NvmlLibrary::read_health and read_system: the configuration and health a node acceptance checks
// (persistence, ECC and row remapping, power and clock limits, PCIe and NVLink state), each read
// with the call NVML documents for it. A call the driver lacks leaves its quantity empty.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "topology/nvml.hpp"
#include "topology/nvml_abi.hpp"
#include "topology/nvml_impl.hpp"

namespace scalebench {

namespace abi = nvml_abi;

namespace {

template <class Fn>
std::optional<bool> enabled(Fn fn, nvmlDevice_t d) {
  nvmlEnableState_t s = 0;
  if (!fn || fn(d, &s) != abi::kSuccess) return std::nullopt;
  return s == abi::kFeatureEnabled;
}

template <class Fn>
std::optional<unsigned int> uint_value(Fn fn, nvmlDevice_t d) {
  unsigned int v = 0;
  if (!fn || fn(d, &v) != abi::kSuccess) return std::nullopt;
  return v;
}

// The speed common to the GPU's links (MB/s); where the driver does not offer that field (Hopper's
// drivers answer NOT_SUPPORTED), the slowest of the active links, each link's speed read as NCCL
// reads it, all in one call.
template <class Nvml>
std::optional<unsigned int> nvlink_speed(const Nvml& n, nvmlDevice_t d, const std::vector<unsigned int>& active) {
  auto field = [](unsigned int id, unsigned int scope) {
    nvmlFieldValue_t f{};
    f.fieldId = id;
    f.scopeId = scope;
    return f;
  };
  auto value = [](const nvmlFieldValue_t& f) -> std::optional<unsigned int> {
    if (f.nvmlReturn != abi::kSuccess || f.valueType != abi::kValueUnsignedInt || f.value.uiVal == 0)
      return std::nullopt;
    return f.value.uiVal;
  };
  nvmlFieldValue_t common = field(abi::kFieldNvLinkSpeedMbpsCommon, 0);
  if (n.nvmlDeviceGetFieldValues(d, 1, &common) == abi::kSuccess)
    if (const auto speed = value(common)) return speed;
  std::vector<nvmlFieldValue_t> links;
  for (unsigned int link : active) links.push_back(field(abi::kFieldNvLinkGetSpeed, link));
  if (links.empty() || n.nvmlDeviceGetFieldValues(d, static_cast<int>(links.size()), links.data()) != abi::kSuccess)
    return std::nullopt;
  std::optional<unsigned int> slowest;
  for (const nvmlFieldValue_t& f : links)
    if (const auto speed = value(f)) slowest = slowest ? std::min(*slowest, *speed) : *speed;
  return slowest;
}

// NVLink state, speed and error counters of one GPU; a template so that it takes NvmlLibrary's
// private Impl without naming it.
template <class Nvml>
void read_nvlinks(const Nvml& n, nvmlDevice_t d, NvmlGpuHealth& h) {
  NvLinkErrorCounts errors;
  bool any_counter = false;
  std::vector<unsigned int> up_links;
  for (unsigned int link = 0; link < abi::kMaxNvLinks; ++link) {
    nvmlEnableState_t active = 0;
    const nvmlReturn_t rc = n.nvmlDeviceGetNvLinkState(d, link, &active);
    if (rc != abi::kSuccess) {
      if (link == 0 || rc != abi::kErrorNotSupported) break;  // past the last link, or no NVLink
      continue;
    }
    ++h.nvlinks;
    if (active != abi::kFeatureEnabled) continue;
    ++h.nvlinks_up;
    up_links.push_back(link);
    if (!n.nvmlDeviceGetNvLinkErrorCounter) continue;
    unsigned long long* const into[abi::kNvLinkErrorCounters] = {&errors.replay, &errors.recovery, &errors.crc,
                                                                 &errors.crc};
    for (int c = 0; c < abi::kNvLinkErrorCounters; ++c) {
      unsigned long long v = 0;
      if (n.nvmlDeviceGetNvLinkErrorCounter(d, link, c, &v) == abi::kSuccess) {
        *into[c] += v;
        any_counter = true;
      }
    }
  }
  if (any_counter) h.nvlink_errors = errors;
  if (h.nvlinks_up > 0 && n.nvmlDeviceGetFieldValues) h.nvlink_speed_mbps = nvlink_speed(n, d, up_links);
}

}  // namespace

std::vector<NvmlGpuHealth> NvmlLibrary::read_health() const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  unsigned int count = 0;
  NVML_CHECK(n, nvmlDeviceGetCount_v2(&count));
  std::vector<NvmlGpuHealth> out;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    const nvmlReturn_t rc = n.nvmlDeviceGetHandleByIndex_v2(i, &d);
    if (rc == abi::kErrorNoPermission) continue;  // hidden by a cgroup, as in read_topology
    n.check(rc, ("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ")").c_str(), __FILE__, __LINE__);
    NvmlGpuHealth h;
    h.index = static_cast<int>(i);
    char name[abi::kNameBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetName(d, name, abi::kNameBufferSize));
    char uuid[abi::kUuidBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetUUID(d, uuid, abi::kUuidBufferSize));
    nvmlPciInfo_t pci{};
    NVML_CHECK(n, nvmlDeviceGetPciInfo_v3(d, &pci));
    h.name.assign(name, strnlen(name, sizeof name));
    h.uuid.assign(uuid, strnlen(uuid, sizeof uuid));
    h.pci_bus_id.assign(pci.busId, strnlen(pci.busId, sizeof pci.busId));

    h.persistence_mode = enabled(n.nvmlDeviceGetPersistenceMode, d);
    nvmlEnableState_t ecc = 0, ecc_pending = 0;
    if (n.nvmlDeviceGetEccMode && n.nvmlDeviceGetEccMode(d, &ecc, &ecc_pending) == abi::kSuccess) {
      h.ecc_enabled = ecc == abi::kFeatureEnabled;
      h.ecc_enabled_pending = ecc_pending == abi::kFeatureEnabled;
    }
    h.retired_pages_pending = enabled(n.nvmlDeviceGetRetiredPagesPendingStatus, d);
    unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
    if (n.nvmlDeviceGetRemappedRows &&
        n.nvmlDeviceGetRemappedRows(d, &corr, &unc, &pending, &failure) == abi::kSuccess) {
      h.remapped_rows_correctable = corr;
      h.remapped_rows_uncorrectable = unc;
      h.remap_pending = pending != 0;
      h.remap_failure = failure != 0;
    }
    h.power_limit_mw = uint_value(n.nvmlDeviceGetEnforcedPowerLimit, d);
    h.default_power_limit_mw = uint_value(n.nvmlDeviceGetPowerManagementDefaultLimit, d);
    unsigned int mhz = 0;
    if (n.nvmlDeviceGetMaxClockInfo && n.nvmlDeviceGetMaxClockInfo(d, abi::kClockSm, &mhz) == abi::kSuccess)
      h.max_sm_clock_mhz = mhz;
    if (n.nvmlDeviceGetApplicationsClock && n.nvmlDeviceGetApplicationsClock(d, abi::kClockSm, &mhz) == abi::kSuccess)
      h.applications_sm_clock_mhz = mhz;
    auto pcie = [&](nvmlDeviceGetPcieValue_fn fn) {
      unsigned int v = 0;
      return fn(d, &v) == abi::kSuccess ? static_cast<int>(v) : 0;
    };
    h.pcie_gen = pcie(n.nvmlDeviceGetCurrPcieLinkGeneration);
    h.pcie_gen_max = pcie(n.nvmlDeviceGetMaxPcieLinkGeneration);
    h.pcie_width = pcie(n.nvmlDeviceGetCurrPcieLinkWidth);
    h.pcie_width_max = pcie(n.nvmlDeviceGetMaxPcieLinkWidth);
    read_nvlinks(n, d, h);
    out.push_back(std::move(h));
  }
  return out;
}

NvmlSystemInfo NvmlLibrary::read_system() const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  NvmlSystemInfo s;
  char version[abi::kSystemDriverVersionBufferSize] = {};
  if (n.nvmlSystemGetDriverVersion &&
      n.nvmlSystemGetDriverVersion(version, abi::kSystemDriverVersionBufferSize) == abi::kSuccess)
    s.driver_version.assign(version, strnlen(version, sizeof version));
  int cuda = 0;
  if (n.nvmlSystemGetCudaDriverVersion_v2 && n.nvmlSystemGetCudaDriverVersion_v2(&cuda) == abi::kSuccess)
    s.cuda_driver_version = cuda;
  return s;
}

}  // namespace scalebench
