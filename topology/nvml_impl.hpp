#pragma once
// NvmlLibrary's private state: the opened library and its entry points. Shared by the files that
// implement NvmlLibrary (nvml.cpp: loading and topology, nvml_telemetry.cpp: readings); nothing
// outside topology/ includes it.
#include <dlfcn.h>

#include <memory>
#include <string>

#include "common/error.hpp"
#include "topology/nvml.hpp"
#include "topology/nvml_abi.hpp"

namespace scalebench {

struct NvmlLibrary::Impl {
  struct DlClose {
    void operator()(void* handle) const {
      if (handle) dlclose(handle);
    }
  };
  std::unique_ptr<void, DlClose> handle;  // a member: closed after ~Impl's body shut NVML down
  bool initialized = false;

  // Named as NVML names them, so that NVML_CHECK's message shows the NVML call.
  nvmlInit_v2_fn nvmlInit_v2 = nullptr;
  nvmlShutdown_fn nvmlShutdown = nullptr;
  nvmlErrorString_fn nvmlErrorString = nullptr;
  nvmlDeviceGetCount_v2_fn nvmlDeviceGetCount_v2 = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn nvmlDeviceGetHandleByIndex_v2 = nullptr;
  nvmlDeviceGetName_fn nvmlDeviceGetName = nullptr;
  nvmlDeviceGetUUID_fn nvmlDeviceGetUUID = nullptr;
  nvmlDeviceGetPciInfo_v3_fn nvmlDeviceGetPciInfo_v3 = nullptr;
  nvmlDeviceGetPcieValue_fn nvmlDeviceGetCurrPcieLinkGeneration = nullptr;
  nvmlDeviceGetPcieValue_fn nvmlDeviceGetMaxPcieLinkGeneration = nullptr;
  nvmlDeviceGetPcieValue_fn nvmlDeviceGetCurrPcieLinkWidth = nullptr;
  nvmlDeviceGetPcieValue_fn nvmlDeviceGetMaxPcieLinkWidth = nullptr;
  nvmlDeviceGetTopologyCommonAncestor_fn nvmlDeviceGetTopologyCommonAncestor = nullptr;
  nvmlDeviceGetNvLinkState_fn nvmlDeviceGetNvLinkState = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_v2_fn nvmlDeviceGetNvLinkRemotePciInfo_v2 = nullptr;
  nvmlDeviceGetNvLinkVersion_fn nvmlDeviceGetNvLinkVersion = nullptr;
  nvmlDeviceGetNvLinkRemoteDeviceType_fn nvmlDeviceGetNvLinkRemoteDeviceType = nullptr;  // optional (NVML 11+)
  // Telemetry, each optional: nullptr when the driver lacks it.
  nvmlDeviceGetPowerUsage_fn nvmlDeviceGetPowerUsage = nullptr;
  nvmlDeviceGetClockInfo_fn nvmlDeviceGetClockInfo = nullptr;
  nvmlDeviceGetUtilizationRates_fn nvmlDeviceGetUtilizationRates = nullptr;
  nvmlDeviceGetMemoryInfo_fn nvmlDeviceGetMemoryInfo = nullptr;
  nvmlDeviceGetPcieThroughput_fn nvmlDeviceGetPcieThroughput = nullptr;
  nvmlDeviceGetFieldValues_fn nvmlDeviceGetFieldValues = nullptr;
  // Clock limits (read_clock_limits), each optional.
  nvmlDeviceGetHandleByUUID_fn nvmlDeviceGetHandleByUUID = nullptr;
  nvmlDeviceGetViolationStatus_fn nvmlDeviceGetViolationStatus = nullptr;
  // Node health (read_health, topology/nvml_health.cpp), each optional.
  nvmlSystemGetDriverVersion_fn nvmlSystemGetDriverVersion = nullptr;
  nvmlSystemGetCudaDriverVersion_v2_fn nvmlSystemGetCudaDriverVersion_v2 = nullptr;
  nvmlDeviceGetEnableState_fn nvmlDeviceGetPersistenceMode = nullptr;
  nvmlDeviceGetEccMode_fn nvmlDeviceGetEccMode = nullptr;
  nvmlDeviceGetEnableState_fn nvmlDeviceGetRetiredPagesPendingStatus = nullptr;
  nvmlDeviceGetRemappedRows_fn nvmlDeviceGetRemappedRows = nullptr;
  nvmlDeviceGetUintValue_fn nvmlDeviceGetEnforcedPowerLimit = nullptr;
  nvmlDeviceGetUintValue_fn nvmlDeviceGetPowerManagementDefaultLimit = nullptr;
  nvmlDeviceGetClockInfo_fn nvmlDeviceGetMaxClockInfo = nullptr;
  nvmlDeviceGetClockInfo_fn nvmlDeviceGetApplicationsClock = nullptr;
  nvmlDeviceGetNvLinkErrorCounter_fn nvmlDeviceGetNvLinkErrorCounter = nullptr;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (initialized) nvmlShutdown();
  }

  std::string error_string(nvmlReturn_t rc) const {
    const char* s = nvmlErrorString ? nvmlErrorString(rc) : nullptr;
    return std::string(s ? s : "unknown NVML error") + " (" + std::to_string(rc) + ")";
  }

  // A compare at the call site; the message is built out of line, in throw_error.
  void check(nvmlReturn_t rc, const char* call, const char* file, int line) const {
    if (rc != nvml_abi::kSuccess) throw_error(rc, call, file, line);
  }
  // Throws Error with file:line, the call's text and error_string (nvml.cpp). A member, since
  // NVML's own error string is read through the loaded library's entry point.
  [[noreturn]] void throw_error(nvmlReturn_t rc, const char* call, const char* file, int line) const;
};

// NVML's CHECK macro, for every NVML call that must work: throws with file:line, the call as
// written and NVML's message.
#define NVML_CHECK(nvml, call) (nvml).check((nvml).call, #call, __FILE__, __LINE__)

}  // namespace scalebench
