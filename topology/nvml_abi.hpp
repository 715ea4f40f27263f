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

}  // extern "C"

// Layout of nvmlPciInfo_t as nvml.h declares it: 16 + 5 x 4 + 32 bytes, busId at 36.
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t must match nvml.h");
static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t must match nvml.h");

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

}  // namespace scalebench::nvml_abi
