#include "workloads/gpu/cublaslt_version.hpp"

#include <cublasLt.h>

namespace scalebench::gpu {

std::string cublaslt_version() {
  const std::size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace scalebench::gpu
