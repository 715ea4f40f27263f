// A stand-in for libnvidia-ml.so.1, built only with the tests and never installed: it measures
// nothing. It lets NvmlLibrary's loading, topology and telemetry reading, NVLink counting and the
// agent's GPU telemetry run on machines without a GPU. It answers the calls topology/nvml.cpp and
// topology/nvml_telemetry.cpp make, for a node picked by FAKE_NVML_SCENARIO when nvmlInit_v2 is
// called:
//   nvswitch4 (default)  4 x "NVIDIA H200", PCIe Gen5 x16, 18 active NVLink 4.0 links each, all to
//                        NVSwitches; GPU0-GPU1 and GPU2-GPU3 share a NUMA node (NODE), others SYS
//   direct4              4 x "NVIDIA A100-SXM4-80GB", NVLink 3.1, 4 links straight to each other GPU
//                        (links 12..17 exist but are inactive)
//   pcie3                3 x "NVIDIA L40S", no NVLink, idle link (Gen1 now, Gen4 max, x16);
//                        GPU0-GPU1 PXB, others SYS
//   hidden3              3 GPUs of which GPU1 answers NVML_ERROR_NO_PERMISSION
//   ibmnpu2              2 GPUs, each with 2 links to the other and 2 to the CPU (IBM NPU)
//   degraded4            nvswitch4 with faults: GPU1's NVLink error counters grow 10 a second,
//                        GPU2 runs at Gen4 x8 and has a row remap pending with persistence mode
//                        off, GPU3 has 2 of its 18 links down and its power limit at 500 of 700 W
//   lost2                2 x "NVIDIA H200" of which GPU1's UUID call answers NVML_ERROR_GPU_IS_LOST
//   none                 no GPU
//   no_driver            nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
// Telemetry is made up, plausible and changing with the time since nvmlInit_v2 (so that a
// scraper sees it move): power 60..260 W, SM clock 1095..1980 MHz, utilisation sweeping 0..100 %,
// a few GiB of memory in use out of the model's size, PCIe tens of MB/s, and NVLink counters
// growing at (index + 1) GiB/s sent and half that received on GPUs with NVLink (NOT_SUPPORTED on
// the others). Clock limits: GPU 0 is held at its power cap for a quarter of the time since
// nvmlInit_v2, the others are never capped;
// thermal violations are NOT_SUPPORTED on pcie3's GPUs and 0 elsewhere.
// Health (nodecheck): driver 570.86.15, CUDA 12.8; persistence on, ECC on, no row remapped or
// pending, power limit at its 700 W default, max SM clock 1980 MHz and applications clock 1755,
// NVLink at 26562 MB/s per link with error counters at 0, except as degraded4 says.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "topology/nvml_abi.hpp"

namespace {

struct FakeLink {
  bool active = true;
  std::string remote_bus;  // "" -> the remote PCI info call fails
  int remote_type = 2;     // NVML_NVLINK_DEVICE_TYPE_SWITCH
  unsigned int speed_mbps = 26562;
};

struct FakeGpu {
  std::string name, uuid, bus;
  unsigned long long memory_bytes = 0;
  unsigned int gen = 0, gen_max = 0, width = 0, width_max = 0;
  unsigned int nvlink_version = 0;  // nvmlNvlinkVersion_t
  std::vector<FakeLink> links;      // empty: NVLink not supported
  bool hidden = false;
  bool lost = false;  // its UUID call fails (NVML_ERROR_GPU_IS_LOST)
  bool persistence = true, remap_pending = false;
  unsigned int power_limit_mw = 700000;
  double nvlink_errors_per_s[4] = {};  // per nvmlNvLinkErrorCounter_t, on each link up to error_links
  unsigned int error_links = 64;
};

std::vector<FakeGpu> g_gpus;
std::vector<std::vector<int>> g_levels;  // nvmlGpuTopologyLevel_t per pair
int g_live_inits = 0;
std::chrono::steady_clock::time_point g_init_time;

// Seconds since nvmlInit_v2: what the made-up telemetry varies with.
double uptime_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_init_time).count(); }

unsigned long long memory_of(const std::string& name) {
  const unsigned long long mib = 1ull << 20;
  if (name == "NVIDIA H200") return 143771 * mib;
  if (name == "NVIDIA A100-SXM4-80GB") return 81920 * mib;
  if (name == "NVIDIA L40S") return 46068 * mib;
  return 16384 * mib;
}

FakeGpu gpu(const std::string& name, int i, const std::string& bus, unsigned int gen, unsigned int gen_max,
            unsigned int width) {
  FakeGpu g;
  g.name = name;
  g.uuid = "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(i);
  g.bus = bus;
  g.gen = gen;
  g.gen_max = gen_max;
  g.width = width;
  g.width_max = width;
  g.memory_bytes = memory_of(name);
  return g;
}

void build(const std::string& scenario) {
  g_gpus.clear();
  const char* h200_buses[] = {"00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0", "00000000:5D:00.0"};
  if (scenario == "nvswitch4" || scenario == "degraded4") {
    for (int i = 0; i < 4; ++i) {
      FakeGpu g = gpu("NVIDIA H200", i, h200_buses[i], 5, 5, 16);
      g.nvlink_version = 6;  // NVML_NVLINK_VERSION_4_0
      for (int l = 0; l < 18; ++l) g.links.push_back({true, "00000000:0" + std::to_string(5 + l % 4) + ":00.0", 2});
      g_gpus.push_back(g);
    }
    g_levels = {{0, 40, 50, 50}, {40, 0, 50, 50}, {50, 50, 0, 40}, {50, 50, 40, 0}};
    if (scenario == "degraded4") {
      g_gpus[1].nvlink_errors_per_s[0] = 10;  // replays: a link fault
      g_gpus[3].nvlink_errors_per_s[2] = 5;   // CRC errors on one link, below 100/s: worth a warning only
      g_gpus[3].error_links = 1;
      g_gpus[2].gen = 4;
      g_gpus[2].width = 8;
      g_gpus[2].remap_pending = true;
      g_gpus[2].persistence = false;
      g_gpus[3].links[4].active = g_gpus[3].links[9].active = false;
      g_gpus[2].links[7].speed_mbps = 13281;  // one link trained at half speed
      g_gpus[3].power_limit_mw = 500000;
    }
  } else if (scenario == "direct4") {
    const char* buses[] = {"00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0"};
    for (int i = 0; i < 4; ++i) {
      FakeGpu g = gpu("NVIDIA A100-SXM4-80GB", i, buses[i], 4, 4, 16);
      g.nvlink_version = 5;  // NVML_NVLINK_VERSION_3_1
      for (int l = 0; l < 12; ++l) g.links.push_back({true, buses[(i + 1 + l / 4) % 4], 0});
      for (int l = 12; l < 18; ++l) g.links.push_back({false, "", 2});
      g_gpus.push_back(g);
    }
    g_levels = {{0, 20, 50, 50}, {20, 0, 50, 50}, {50, 50, 0, 20}, {50, 50, 20, 0}};
  } else if (scenario == "pcie3") {
    const char* buses[] = {"00000000:01:00.0", "00000000:02:00.0", "00000000:81:00.0"};
    for (int i = 0; i < 3; ++i) g_gpus.push_back(gpu("NVIDIA L40S", i, buses[i], 1, 4, 16));
    g_levels = {{0, 20, 50}, {20, 0, 50}, {50, 50, 0}};
  } else if (scenario == "hidden3") {
    for (int i = 0; i < 3; ++i) g_gpus.push_back(gpu("NVIDIA H200", i, h200_buses[i], 5, 5, 16));
    g_gpus[1].hidden = true;
    g_levels = {{0, 10, 10}, {10, 0, 10}, {10, 10, 0}};
  } else if (scenario == "lost2") {
    for (int i = 0; i < 2; ++i) g_gpus.push_back(gpu("NVIDIA H200", i, h200_buses[i], 5, 5, 16));
    g_gpus[1].lost = true;
    g_levels = {{0, 50}, {50, 0}};
  } else if (scenario == "ibmnpu2") {
    const char* buses[] = {"00000004:04:00.0", "00000004:05:00.0"};
    for (int i = 0; i < 2; ++i) {
      FakeGpu g = gpu("Tesla V100-SXM2-16GB", i, buses[i], 3, 3, 16);
      g.nvlink_version = 2;  // NVML_NVLINK_VERSION_2_0
      g.links = {{true, buses[1 - i], 0}, {true, buses[1 - i], 0}, {true, "00000000:00:01.0", 1}, {true, "", 1}};
      g_gpus.push_back(g);
    }
    g_levels = {{0, 50}, {50, 0}};
  }
}

FakeGpu* of(nvmlDevice_t d) { return reinterpret_cast<FakeGpu*>(d); }

nvmlReturn_t copy(const std::string& s, char* out, unsigned int length) {
  if (s.size() + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(out, s.c_str(), s.size() + 1);
  return 0;
}

void fill_pci(const std::string& bus, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof *pci);
  std::strncpy(pci->busId, bus.c_str(), sizeof pci->busId - 1);
  std::strncpy(pci->busIdLegacy, bus.c_str() + 4, sizeof pci->busIdLegacy - 1);
}

}  // namespace

extern "C" {

// Test hook: nvmlInit_v2 calls not yet matched by nvmlShutdown.
int fake_nvml_live_inits() { return g_live_inits; }

nvmlReturn_t nvmlInit_v2(void) {
  const char* s = std::getenv("FAKE_NVML_SCENARIO");
  const std::string scenario = s && *s ? s : "nvswitch4";
  if (scenario == "no_driver") return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  build(scenario);
  g_init_time = std::chrono::steady_clock::now();
  ++g_live_inits;
  return 0;
}

nvmlReturn_t nvmlShutdown(void) {
  --g_live_inits;
  return 0;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case 0:
      return "Success";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = static_cast<unsigned int>(g_gpus.size());
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= g_gpus.size()) return 2;
  if (g_gpus[index].hidden) return 4;
  *device = reinterpret_cast<nvmlDevice_t>(&g_gpus[index]);
  return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  return copy(of(d)->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  if (of(d)->lost) return 15;  // NVML_ERROR_GPU_IS_LOST
  return copy(of(d)->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  fill_pci(of(d)->bus, pci);
  return 0;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* v) {
  *v = of(d)->gen;
  return 0;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int* v) {
  *v = of(d)->gen_max;
  return 0;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* v) {
  *v = of(d)->width;
  return 0;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int* v) {
  *v = of(d)->width_max;
  return 0;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t* level) {
  *level = g_levels[static_cast<std::size_t>(of(a) - g_gpus.data())][static_cast<std::size_t>(of(b) - g_gpus.data())];
  return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t* active) {
  if (of(d)->links.empty()) return 3;
  if (link >= of(d)->links.size()) return 2;
  *active = of(d)->links[link].active ? 1 : 0;
  return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t* pci) {
  if (link >= of(d)->links.size()) return 2;
  if (of(d)->links[link].remote_bus.empty()) return 3;
  fill_pci(of(d)->links[link].remote_bus, pci);
  return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int* version) {
  if (link >= of(d)->links.size()) return 2;
  *version = of(d)->nvlink_version;
  return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, nvmlIntNvLinkDeviceType_t* type) {
  if (link >= of(d)->links.size()) return 2;
  *type = of(d)->links[link].remote_type;
  return 0;
}

// Telemetry. Each value is a function of the GPU's index and the time since nvmlInit_v2.
std::size_t index_of(nvmlDevice_t d) { return static_cast<std::size_t>(of(d) - g_gpus.data()); }
unsigned int sweep(double period_s, unsigned int lo, unsigned int hi, std::size_t phase) {
  double x = uptime_s() / period_s + 0.25 * static_cast<double>(phase);
  x -= static_cast<double>(static_cast<long long>(x));  // 0..1, a sawtooth
  return lo + static_cast<unsigned int>(x * (hi - lo));
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  *mw = sweep(10, 60000, 260000, index_of(d));
  return 0;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int* mhz) {
  if (type < 0 || type > 3) return 2;
  *mhz = type == scalebench::nvml_abi::kClockSm ? sweep(7, 1095, 1980, index_of(d)) : 1593;
  return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = sweep(5, 0, 101, index_of(d));
  u->memory = u->gpu / 2;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = of(d)->memory_bytes;
  m->used = (512ull << 20) + (static_cast<unsigned long long>(sweep(8, 0, 4096, index_of(d))) << 20);
  m->free = m->total - m->used;
  return 0;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t counter, unsigned int* kBps) {
  if (counter != 0 && counter != 1) return 2;
  *kBps = sweep(3, 1000, 50000, index_of(d) + static_cast<std::size_t>(counter));
  return 0;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  if (count < 0 || !values) return 2;
  const long long now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (int k = 0; k < count; ++k) {
    nvmlFieldValue_t& f = values[k];
    f.timestamp = now_us;
    f.latencyUsec = 0;
    // The common speed as A100 drivers offer it; Hopper's answer NOT_SUPPORTED and give each link's.
    const bool hopper = of(d)->nvlink_version >= 6;
    if (f.fieldId == scalebench::nvml_abi::kFieldNvLinkSpeedMbpsCommon) {
      f.nvmlReturn = of(d)->links.empty() || hopper ? 3 : 0;
      f.valueType = scalebench::nvml_abi::kValueUnsignedInt;
      f.value.uiVal = 26562;
      continue;
    }
    if (f.fieldId == scalebench::nvml_abi::kFieldNvLinkGetSpeed) {
      f.nvmlReturn = f.scopeId < of(d)->links.size() ? 0 : 2;
      f.valueType = scalebench::nvml_abi::kValueUnsignedInt;
      f.value.uiVal = f.scopeId < of(d)->links.size() ? of(d)->links[f.scopeId].speed_mbps : 0;
      continue;
    }
    const bool nvlink_field = f.fieldId == scalebench::nvml_abi::kFieldNvLinkThroughputDataTx ||
                              f.fieldId == scalebench::nvml_abi::kFieldNvLinkThroughputDataRx;
    if (!nvlink_field || f.scopeId != scalebench::nvml_abi::kScopeAllLinks) {
      f.nvmlReturn = 2;  // NVML_ERROR_INVALID_ARGUMENT: a field this stand-in does not know
      continue;
    }
    if (of(d)->links.empty()) {
      f.nvmlReturn = 3;
      continue;
    }
    // TX (index + 1) GiB/s, RX half of that: distinct, so that a swap shows.
    const bool tx = f.fieldId == scalebench::nvml_abi::kFieldNvLinkThroughputDataTx;
    const double kib_per_s = static_cast<double>(index_of(d) + 1) * 1024 * 1024 * (tx ? 1.0 : 0.5);
    f.valueType = scalebench::nvml_abi::kValueUnsignedLongLong;
    f.value.ullVal = static_cast<unsigned long long>(uptime_s() * kib_per_s);
    f.nvmlReturn = 0;
  }
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!uuid || !device) return 2;
  for (FakeGpu& g : g_gpus)
    if (g.uuid == uuid) {
      if (g.hidden) return 4;
      *device = reinterpret_cast<nvmlDevice_t>(&g);
      return 0;
    }
  return 6;  // NVML_ERROR_NOT_FOUND
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t d, nvmlPerfPolicyType_t policy, nvmlViolationTime_t* v) {
  if (!v) return 2;
  const long long now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  v->referenceTime = static_cast<unsigned long long>(now_us);
  if (policy == scalebench::nvml_abi::kPerfPolicyPower) {
    v->violationTime = index_of(d) == 0 ? static_cast<unsigned long long>(uptime_s() * 0.25e9) : 0;
    return 0;
  }
  if (policy == scalebench::nvml_abi::kPerfPolicyThermal) {
    if (of(d)->name == "NVIDIA L40S") return 3;
    v->violationTime = 0;
    return 0;
  }
  return 3;
}

// Health, for nodecheck.
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return copy("570.86.15", version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = 12080;
  return 0;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t* s) {
  *s = of(d)->persistence ? 1 : 0;
  return 0;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  *current = *pending = 1;
  return 0;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc, unsigned int* pending,
                                       unsigned int* failure) {
  *corr = 0;
  *unc = of(d)->remap_pending ? 1 : 0;
  *pending = of(d)->remap_pending ? 1 : 0;
  *failure = 0;
  return 0;
}

// Pre-Ampere page retirement: Ampere and later answer NOT_SUPPORTED, as the real driver does.
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t, nvmlEnableState_t*) { return 3; }

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  *mw = of(d)->power_limit_mw;
  return 0;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t, unsigned int* mw) {
  *mw = 700000;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t, nvmlClockType_t type, unsigned int* mhz) {
  if (type < 0 || type > 3) return 2;
  *mhz = type == scalebench::nvml_abi::kClockSm ? 1980 : 2619;
  return 0;
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t, nvmlClockType_t type, unsigned int* mhz) {
  if (type < 0 || type > 3) return 2;
  *mhz = type == scalebench::nvml_abi::kClockSm ? 1755 : 2619;
  return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter,
                                             unsigned long long* value) {
  if (of(d)->links.empty()) return 3;
  if (link >= of(d)->links.size() || counter < 0 || counter > 4) return 2;
  const bool counts = counter < 4 && link < of(d)->error_links;
  *value = counts ? static_cast<unsigned long long>(uptime_s() * of(d)->nvlink_errors_per_s[counter]) : 0;
  return 0;
}

}  // extern "C"
