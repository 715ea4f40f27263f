#include "topology/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/call_failed.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "topology/nvml_abi.hpp"
#include "topology/nvml_impl.hpp"

namespace scalebench {

namespace abi = nvml_abi;

namespace {

template <typename Fn>
void load_symbol(void* handle, const char* name, Fn& fn, std::string* missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!fn && missing) *missing += std::string(missing->empty() ? "" : ", ") + name;
}

std::string c_string(const char* buf, std::size_t size) { return std::string(buf, strnlen(buf, size)); }

}  // namespace

NvmlLibrary NvmlLibrary::open(const std::string& path) {
  NvmlLibrary lib;
  auto impl = std::make_unique<Impl>();
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    lib.reason_ = "cannot open " + path + ": " + (why ? why : "dlopen failed");
    return lib;
  }
  impl->handle.reset(handle);
  std::string missing;
  Impl& n = *impl;
  load_symbol(handle, "nvmlInit_v2", n.nvmlInit_v2, &missing);
  load_symbol(handle, "nvmlShutdown", n.nvmlShutdown, &missing);
  load_symbol(handle, "nvmlErrorString", n.nvmlErrorString, &missing);
  load_symbol(handle, "nvmlDeviceGetCount_v2", n.nvmlDeviceGetCount_v2, &missing);
  load_symbol(handle, "nvmlDeviceGetHandleByIndex_v2", n.nvmlDeviceGetHandleByIndex_v2, &missing);
  load_symbol(handle, "nvmlDeviceGetName", n.nvmlDeviceGetName, &missing);
  load_symbol(handle, "nvmlDeviceGetUUID", n.nvmlDeviceGetUUID, &missing);
  load_symbol(handle, "nvmlDeviceGetPciInfo_v3", n.nvmlDeviceGetPciInfo_v3, &missing);
  load_symbol(handle, "nvmlDeviceGetCurrPcieLinkGeneration", n.nvmlDeviceGetCurrPcieLinkGeneration, &missing);
  load_symbol(handle, "nvmlDeviceGetMaxPcieLinkGeneration", n.nvmlDeviceGetMaxPcieLinkGeneration, &missing);
  load_symbol(handle, "nvmlDeviceGetCurrPcieLinkWidth", n.nvmlDeviceGetCurrPcieLinkWidth, &missing);
  load_symbol(handle, "nvmlDeviceGetMaxPcieLinkWidth", n.nvmlDeviceGetMaxPcieLinkWidth, &missing);
  load_symbol(handle, "nvmlDeviceGetTopologyCommonAncestor", n.nvmlDeviceGetTopologyCommonAncestor, &missing);
  load_symbol(handle, "nvmlDeviceGetNvLinkState", n.nvmlDeviceGetNvLinkState, &missing);
  load_symbol(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", n.nvmlDeviceGetNvLinkRemotePciInfo_v2, &missing);
  load_symbol(handle, "nvmlDeviceGetNvLinkVersion", n.nvmlDeviceGetNvLinkVersion, &missing);
  load_symbol(handle, "nvmlDeviceGetNvLinkRemoteDeviceType", n.nvmlDeviceGetNvLinkRemoteDeviceType, nullptr);
  // Telemetry calls are optional: a driver that lacks one leaves that quantity unread.
  load_symbol(handle, "nvmlDeviceGetPowerUsage", n.nvmlDeviceGetPowerUsage, nullptr);
  load_symbol(handle, "nvmlDeviceGetClockInfo", n.nvmlDeviceGetClockInfo, nullptr);
  load_symbol(handle, "nvmlDeviceGetUtilizationRates", n.nvmlDeviceGetUtilizationRates, nullptr);
  load_symbol(handle, "nvmlDeviceGetMemoryInfo", n.nvmlDeviceGetMemoryInfo, nullptr);
  load_symbol(handle, "nvmlDeviceGetPcieThroughput", n.nvmlDeviceGetPcieThroughput, nullptr);
  load_symbol(handle, "nvmlDeviceGetFieldValues", n.nvmlDeviceGetFieldValues, nullptr);
  load_symbol(handle, "nvmlDeviceGetHandleByUUID", n.nvmlDeviceGetHandleByUUID, nullptr);
  load_symbol(handle, "nvmlDeviceGetViolationStatus", n.nvmlDeviceGetViolationStatus, nullptr);
  load_symbol(handle, "nvmlSystemGetDriverVersion", n.nvmlSystemGetDriverVersion, nullptr);
  load_symbol(handle, "nvmlSystemGetCudaDriverVersion_v2", n.nvmlSystemGetCudaDriverVersion_v2, nullptr);
  load_symbol(handle, "nvmlDeviceGetPersistenceMode", n.nvmlDeviceGetPersistenceMode, nullptr);
  load_symbol(handle, "nvmlDeviceGetEccMode", n.nvmlDeviceGetEccMode, nullptr);
  load_symbol(handle, "nvmlDeviceGetRetiredPagesPendingStatus", n.nvmlDeviceGetRetiredPagesPendingStatus, nullptr);
  load_symbol(handle, "nvmlDeviceGetRemappedRows", n.nvmlDeviceGetRemappedRows, nullptr);
  load_symbol(handle, "nvmlDeviceGetEnforcedPowerLimit", n.nvmlDeviceGetEnforcedPowerLimit, nullptr);
  load_symbol(handle, "nvmlDeviceGetPowerManagementDefaultLimit", n.nvmlDeviceGetPowerManagementDefaultLimit, nullptr);
  load_symbol(handle, "nvmlDeviceGetMaxClockInfo", n.nvmlDeviceGetMaxClockInfo, nullptr);
  load_symbol(handle, "nvmlDeviceGetApplicationsClock", n.nvmlDeviceGetApplicationsClock, nullptr);
  load_symbol(handle, "nvmlDeviceGetNvLinkErrorCounter", n.nvmlDeviceGetNvLinkErrorCounter, nullptr);
  if (!missing.empty()) {
    lib.reason_ = path + " lacks " + missing + " (a driver older than NVML 11?)";
    return lib;  // impl's handle closes here
  }
  nvmlReturn_t rc = n.nvmlInit_v2();
  if (rc != abi::kSuccess) {
    lib.reason_ = "nvmlInit_v2: " + n.error_string(rc);
    return lib;
  }
  n.initialized = true;
  lib.impl_ = std::move(impl);
  return lib;
}

void NvmlLibrary::Impl::throw_error(nvmlReturn_t rc, const char* call, const char* file, int line) const {
  throw_call_failed(file, line, call, error_string(rc));
}

NvmlLibrary::NvmlLibrary(NvmlLibrary&&) noexcept = default;
NvmlLibrary& NvmlLibrary::operator=(NvmlLibrary&&) noexcept = default;
NvmlLibrary::~NvmlLibrary() = default;

namespace {
// A GPU as read_topology sees it.
struct Device {
  nvmlDevice_t handle = nullptr;
  GpuInfo info;
  std::string bus;  // canonical_pci_bus_id
  int nvlink_version = 0;
  int switch_links = 0;                   // active links to an NVSwitch (or a remote NVML cannot name)
  std::vector<std::string> remote_buses;  // canonical bus id of each active link's far end, "" unknown
};

// Every GPU this process may use, with its PCIe link. The template functions here take
// NvmlLibrary's private Impl without naming it.
template <class Nvml>
std::vector<Device> read_devices(const Nvml& n) {
  unsigned int count = 0;
  NVML_CHECK(n, nvmlDeviceGetCount_v2(&count));
  std::vector<Device> devices;
  for (unsigned int i = 0; i < count; ++i) {
    Device d;
    nvmlReturn_t rc = n.nvmlDeviceGetHandleByIndex_v2(i, &d.handle);
    if (rc == abi::kErrorNoPermission) {
      log::warn("NVML: GPU " + std::to_string(i) + " is not accessible (" + n.error_string(rc) + "); left out");
      continue;
    }
    n.check(rc, ("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ")").c_str(), __FILE__, __LINE__);
    char name[abi::kNameBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetName(d.handle, name, abi::kNameBufferSize));
    char uuid[abi::kUuidBufferSize] = {};
    NVML_CHECK(n, nvmlDeviceGetUUID(d.handle, uuid, abi::kUuidBufferSize));
    nvmlPciInfo_t pci{};
    NVML_CHECK(n, nvmlDeviceGetPciInfo_v3(d.handle, &pci));
    auto value = [&](nvmlDeviceGetPcieValue_fn fn) {
      unsigned int v = 0;
      return fn(d.handle, &v) == abi::kSuccess ? static_cast<int>(v) : 0;  // unknown (e.g. in some VMs): 0
    };
    d.info.index = static_cast<int>(i);
    d.info.name = c_string(name, sizeof name);
    d.info.uuid = c_string(uuid, sizeof uuid);
    d.info.pci_bus_id = c_string(pci.busId, sizeof pci.busId);
    d.info.pcie_gen = value(n.nvmlDeviceGetCurrPcieLinkGeneration);
    d.info.pcie_gen_max = value(n.nvmlDeviceGetMaxPcieLinkGeneration);
    d.info.pcie_width = value(n.nvmlDeviceGetCurrPcieLinkWidth);
    d.info.pcie_width_max = value(n.nvmlDeviceGetMaxPcieLinkWidth);
    d.bus = canonical_pci_bus_id(d.info.pci_bus_id);
    devices.push_back(std::move(d));
  }
  return devices;
}

// NVLinks: every active link's far end, another of `devices` or a switch. A GPU without NVLink
// answers NOT_SUPPORTED; links past the GPU's last answer INVALID_ARGUMENT.
template <class Nvml>
void read_links(const Nvml& n, std::vector<Device>& devices) {
  for (Device& d : devices) {
    for (unsigned int link = 0; link < abi::kMaxNvLinks; ++link) {
      nvmlEnableState_t active = 0;
      nvmlReturn_t rc = n.nvmlDeviceGetNvLinkState(d.handle, link, &active);
      if (rc == abi::kErrorNotSupported && link == 0) break;
      if (rc != abi::kSuccess || active != abi::kFeatureEnabled) continue;
      unsigned int version = 0;
      if (d.nvlink_version == 0 && n.nvmlDeviceGetNvLinkVersion(d.handle, link, &version) == abi::kSuccess)
        d.nvlink_version = nvlink_major_version(version);
      nvmlPciInfo_t remote{};
      std::string bus;
      if (n.nvmlDeviceGetNvLinkRemotePciInfo_v2(d.handle, link, &remote) == abi::kSuccess)
        bus = canonical_pci_bus_id(c_string(remote.busId, sizeof remote.busId));
      const bool to_gpu = !bus.empty() && std::any_of(devices.begin(), devices.end(),
                                                      [&](const Device& o) { return o.bus == bus && &o != &d; });
      if (to_gpu) {
        d.remote_buses.push_back(bus);
        continue;
      }
      nvmlIntNvLinkDeviceType_t type = abi::kNvLinkDeviceSwitch;
      if (n.nvmlDeviceGetNvLinkRemoteDeviceType &&
          n.nvmlDeviceGetNvLinkRemoteDeviceType(d.handle, link, &type) != abi::kSuccess)
        type = abi::kNvLinkDeviceSwitch;
      // Not one of our GPUs: an NVSwitch (those of Hopper and later are no PCI devices of the
      // host, so NVML may not name them), unless NVML says it is a CPU (IBM NPU) or a GPU we
      // cannot see.
      if (type != abi::kNvLinkDeviceIbmNpu && type != abi::kNvLinkDeviceGpu) ++d.switch_links;
    }
  }
}

// The link between two GPUs: NVLink when either reaches the other (straight or through
// NVSwitches), else the PCIe path NVML names.
template <class Nvml>
Link gpu_link(const Nvml& n, const Device& a, const Device& b) {
  Link l;
  auto direct = [](const Device& from, const Device& to) {
    return static_cast<int>(std::count(from.remote_buses.begin(), from.remote_buses.end(), to.bus));
  };
  // Links straight to the other GPU, plus, when both reach NVSwitches, as many as the one with
  // fewer switch links has (how nvidia-smi topo -m counts NV# on NVSwitch systems).
  const int links = std::max(direct(a, b), direct(b, a)) + std::min(a.switch_links, b.switch_links);
  if (links > 0) {
    l.kind = "NVLINK";
    l.nvlinks = links;
    const int va = a.nvlink_version, vb = b.nvlink_version;
    l.nvlink_version = va > 0 && vb > 0 ? std::min(va, vb) : std::max(va, vb);
    l.nvlink_GBps_per_link = nvlink_GBps_per_link(l.nvlink_version);
    return l;
  }
  nvmlGpuTopologyLevel_t level = abi::kTopologySystem;
  nvmlReturn_t rc = n.nvmlDeviceGetTopologyCommonAncestor(a.handle, b.handle, &level);
  if (rc != abi::kSuccess) {
    log::debug("NVML: nvmlDeviceGetTopologyCommonAncestor(GPU" + std::to_string(a.info.index) + ", GPU" +
               std::to_string(b.info.index) + "): " + n.error_string(rc) + "; taking SYS");
    level = abi::kTopologySystem;
  }
  l.kind = pcie_path_kind(level);
  return l;
}
}  // namespace

// In phases: the GPUs first, since a link's far end is told apart as one of them or a switch by
// its bus id; then each GPU's links; then the matrix of every pair.
Topology NvmlLibrary::read_topology() const {
  if (!impl_) throw Error("NVML is not available: " + reason_);
  const Impl& n = *impl_;
  std::vector<Device> devices = read_devices(n);
  read_links(n, devices);
  Topology t;
  t.source = "nvml";
  for (const Device& d : devices) t.gpus.push_back(d.info);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::vector<Link> row;
    for (std::size_t k = 0; k < devices.size(); ++k) {
      if (i == k) {
        Link self;
        self.kind = "SELF";
        row.push_back(self);
      } else {
        row.push_back(gpu_link(n, devices[i], devices[k]));
      }
    }
    t.links.push_back(std::move(row));
  }
  return t;
}

std::string pcie_path_kind(int level) {
  switch (level) {
    case abi::kTopologyInternal:
    case abi::kTopologySingle:
      return "PIX";
    case abi::kTopologyMultiple:
      return "PXB";
    case abi::kTopologyHostbridge:
      return "PHB";
    case abi::kTopologyNode:
      return "NODE";
    default:
      return "SYS";
  }
}

int nvlink_major_version(unsigned int v) {
  switch (v) {
    case 1:
      return 1;
    case 2:
    case 3:
      return 2;
    case 4:
    case 5:
      return 3;
    case 6:
      return 4;
    case 7:
      return 5;
    case 8:
      return 6;
    default:
      return 0;
  }
}

}  // namespace scalebench
