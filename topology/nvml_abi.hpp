#pragma once
// The few NVML types and entry points scalebench uses, declared by hand so that nothing needs
// nvml.h or libnvidia-ml at build time: the library is opened with dlopen at run time
// (topology/nvml.cpp). Every declaration mirrors NVIDIA's public nvml.h (NVML API version 12/13,
// as vendored by github.com/NVIDIA/go-nvml, gen/nvml/nvml.h); only what is used is declared.
// Private to topology/ (and its test stand-in, topology/fake_nvml/).
#include <cstddef>

extern "C" {

// C enums are int-sized on the Linux ABIs NVML ships for (x86-64, aarch64).
typedef int nvmlReturn_t;               // enum nvmlReturn_enum
typedef int nvmlEnableState_t;          // enum nvmlEnableState_enum
typedef int nvmlGpuTopologyLevel_t;     // enum nvmlGpuLevel_enum
typedef int nvmlIntNvLinkDeviceType_t;  // enum nvmlIntNvLinkDeviceType_enum
typedef int nvmlClockType_t;            // enum nvmlClockType_enum
typedef int nvmlPcieUtilCounter_t;      // enum nvmlPcieUtilCounter_enum
typedef int nvmlValueType_t;            // enum nvmlValueType_enum
typedef int nvmlPerfPolicyType_t;       // enum nvmlPerfPolicyType_enum

typedef struct nvmlDevice_st* nvmlDevice_t;

// nvmlPciInfo_t, as filled by nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2.
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE: "0000:19:00.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:19:00.0"
} nvmlPciInfo_t;

// Telemetry (topology/nvml_telemetry.cpp).
typedef struct nvmlUtilization_st {
  unsigned int gpu;     // % of the last sample period in which a kernel ran
  unsigned int memory;  // % of the last sample period in which device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {  // v1, as nvmlDeviceGetMemoryInfo fills it; bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;  // NVML_FI_*, set by the caller
  unsigned int scopeId;  // for NVLink throughput: the link, or UINT_MAX for the sum over all links
  long long timestamp;   // CPU time of the value, microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // this value's own status: value is undefined unless NVML_SUCCESS
  nvmlValue_t value;
} nvmlFieldValue_t;

// nvmlDeviceGetViolationStatus: how long a policy held the clocks below the application clocks.
typedef struct nvmlViolationTime_st {
  unsigned long long referenceTime;  // CPU timestamp, microseconds
  unsigned long long violationTime;  // nanoseconds, cumulative
} nvmlViolationTime_t;

typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* deviceCount);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_v3_fn)(nvmlDevice_t device, nvmlPciInfo_t* pci);
// nvmlDeviceGet{Curr,Max}PcieLink{Generation,Width}
typedef nvmlReturn_t (*nvmlDeviceGetPcieValue_fn)(nvmlDevice_t device, unsigned int* value);
typedef nvmlReturn_t (*nvmlDeviceGetTopologyCommonAncestor_fn)(nvmlDevice_t device1, nvmlDevice_t device2,
                                                               nvmlGpuTopologyLevel_t* pathInfo);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t device, unsigned int link,
                                                    nvmlEnableState_t* isActive);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2_fn)(nvmlDevice_t device, unsigned int link,
                                                               nvmlPciInfo_t* pci);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkVersion_fn)(nvmlDevice_t device, unsigned int link, unsigned int* version);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemoteDeviceType_fn)(nvmlDevice_t device, unsigned int link,
                                                               nvmlIntNvLinkDeviceType_t* pNvLinkDeviceType);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device, unsigned int* power);  // mW
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type,
                                                  unsigned int* clock);  // MHz
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t device, nvmlUtilization_t* utilization);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device, nvmlMemory_t* memory);
// KB/s over a 20 ms window
typedef nvmlReturn_t (*nvmlDeviceGetPcieThroughput_fn)(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                                       unsigned int* value);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByUUID_fn)(const char* uuid, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetViolationStatus_fn)(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                                        nvmlViolationTime_t* violTime);
// Node health (topology/nvml_health.cpp), each optional.
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char* version, unsigned int length);
typedef nvmlReturn_t (*nvmlSystemGetCudaDriverVersion_v2_fn)(int* cudaDriverVersion);  // 12040 = 12.4
typedef nvmlReturn_t (*nvmlDeviceGetEnableState_fn)(nvmlDevice_t device, nvmlEnableState_t* state);
typedef nvmlReturn_t (*nvmlDeviceGetEccMode_fn)(nvmlDevice_t device, nvmlEnableState_t* current,
                                                nvmlEnableState_t* pending);
typedef nvmlReturn_t (*nvmlDeviceGetRemappedRows_fn)(nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,
                                                     unsigned int* isPending, unsigned int* failureOccurred);
typedef nvmlReturn_t (*nvmlDeviceGetUintValue_fn)(nvmlDevice_t device, unsigned int* value);  // power limits, mW
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkErrorCounter_fn)(nvmlDevice_t device, unsigned int link, int counter,
                                                           unsigned long long* counterValue);

}  // extern "C"

// Layout of nvmlPciInfo_t as nvml.h declares it: 16 + 5 x 4 + 32 bytes, busId at 36.
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t must match nvml.h");
static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t must match nvml.h");
// nvmlFieldValue_t: 2 x 4 + 2 x 8 + 2 x 4 bytes, then the 8-byte union.
static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t must match nvml.h");
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t must match nvml.h");
static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t must match nvml.h");
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t must match nvml.h");
static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t must match nvml.h");
static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t must match nvml.h");

namespace scalebench::nvml_abi {

inline constexpr nvmlReturn_t kSuccess = 0;              // NVML_SUCCESS
inline constexpr nvmlReturn_t kErrorNotSupported = 3;    // NVML_ERROR_NOT_SUPPORTED
inline constexpr nvmlReturn_t kErrorNoPermission = 4;    // NVML_ERROR_NO_PERMISSION
inline constexpr nvmlEnableState_t kFeatureEnabled = 1;  // NVML_FEATURE_ENABLED
inline constexpr unsigned int kNameBufferSize = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kUuidBufferSize = 96;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned int kMaxNvLinks = 36;          // NVML_NVLINK_MAX_LINKS (18 before Blackwell)

// nvmlGpuTopologyLevel_t values (nvmlGpuLevel_enum).
inline constexpr nvmlGpuTopologyLevel_t kTopologyInternal = 0;     // one board (e.g. K80)
inline constexpr nvmlGpuTopologyLevel_t kTopologySingle = 10;      // one PCIe switch: PIX
inline constexpr nvmlGpuTopologyLevel_t kTopologyMultiple = 20;    // several switches, no host bridge: PXB
inline constexpr nvmlGpuTopologyLevel_t kTopologyHostbridge = 30;  // the same host bridge: PHB
inline constexpr nvmlGpuTopologyLevel_t kTopologyNode = 40;        // host bridges of one NUMA node: NODE
inline constexpr nvmlGpuTopologyLevel_t kTopologySystem = 50;      // across NUMA nodes: SYS

// nvmlIntNvLinkDeviceType_t values.
inline constexpr nvmlIntNvLinkDeviceType_t kNvLinkDeviceGpu = 0x00;
inline constexpr nvmlIntNvLinkDeviceType_t kNvLinkDeviceIbmNpu = 0x01;
inline constexpr nvmlIntNvLinkDeviceType_t kNvLinkDeviceSwitch = 0x02;

inline constexpr nvmlClockType_t kClockSm = 1;                      // NVML_CLOCK_SM
inline constexpr unsigned int kSystemDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
// nvmlNvLinkErrorCounter_t: DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA, in this order.
inline constexpr int kNvLinkErrorCounters = 4;
// NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: the common speed of the active links, MB/s per direction.
inline constexpr unsigned int kFieldNvLinkSpeedMbpsCommon = 90;
inline constexpr unsigned int kFieldNvLinkGetSpeed = 164;      // NVML_FI_DEV_NVLINK_GET_SPEED: MB/s of link scopeId
inline constexpr nvmlPerfPolicyType_t kPerfPolicyPower = 0;    // NVML_PERF_POLICY_POWER
inline constexpr nvmlPerfPolicyType_t kPerfPolicyThermal = 1;  // NVML_PERF_POLICY_THERMAL
inline constexpr nvmlPcieUtilCounter_t kPcieUtilTxBytes = 0;   // NVML_PCIE_UTIL_TX_BYTES
inline constexpr nvmlPcieUtilCounter_t kPcieUtilRxBytes = 1;   // NVML_PCIE_UTIL_RX_BYTES
// NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_{TX,RX}: payload KiB since the driver loaded (counters).
inline constexpr unsigned int kFieldNvLinkThroughputDataTx = 138;
inline constexpr unsigned int kFieldNvLinkThroughputDataRx = 139;
inline constexpr unsigned int kScopeAllLinks = 0xFFFFFFFFu;  // scopeId UINT_MAX: summed over every link

// nvmlValueType_t values.
inline constexpr nvmlValueType_t kValueDouble = 0;
inline constexpr nvmlValueType_t kValueUnsignedInt = 1;
inline constexpr nvmlValueType_t kValueUnsignedLong = 2;
inline constexpr nvmlValueType_t kValueUnsignedLongLong = 3;
inline constexpr nvmlValueType_t kValueSignedLongLong = 4;
inline constexpr nvmlValueType_t kValueSignedInt = 5;
inline constexpr nvmlValueType_t kValueUnsignedShort = 6;

}  // namespace scalebench::nvml_abi
