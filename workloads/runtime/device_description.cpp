#include "workloads/runtime/device_description.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstdio>

#include "workloads/gpu/cuda_check.hpp"

namespace scalebench {

namespace {
std::string uuid_text(const cudaUUID_t& id) {
  char uuid[64] = {};
  const auto* u = reinterpret_cast<const unsigned char*>(id.bytes);
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return uuid;
}
}  // namespace

std::string device_uuid(int device) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return uuid_text(p.uuid);
}

DeviceId describe_device(int device) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return DeviceId{p.name, uuid_text(p.uuid), bus};
}

Json gpu_versions() {
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  auto cuda_str = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::size_t cudnn = cudnnGetVersion();
  return Json{{"cuda_driver", cuda_str(driver)},
              {"cuda_runtime", cuda_str(runtime)},
              {"nccl", std::to_string(nccl / 10000) + "." + std::to_string((nccl / 100) % 100) + "." +
                           std::to_string(nccl % 100)},
              {"cudnn", std::to_string(cudnn / 10000) + "." + std::to_string((cudnn / 100) % 100) + "." +
                            std::to_string(cudnn % 100)}};
}

}  // namespace scalebench
