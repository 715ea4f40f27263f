#pragma once
#include <string>

#include "common/json.hpp"
#include "workloads/runtime/environment.hpp"

// What every GPU workload's records say about the GPUs it ran on, read from the CUDA runtime.
// Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench {

// A GPU's name, UUID and PCI bus id.
DeviceId describe_device(int device);
// Its UUID alone, "GPU-..." as NVML and nvidia-smi write it (NVML's handle for clock limits).
std::string device_uuid(int device);
// The versions of the stack: CUDA driver and runtime, NCCL, cuDNN.
Json gpu_versions();

}  // namespace scalebench
