#include "workloads/gpu/cuda_check.hpp"

#include "common/call_failed.hpp"

namespace scalebench {

void throw_cuda_error(const char* file, int line, const char* call, cudaError_t status) {
  throw_call_failed(file, line, call, cudaGetErrorString(status));
}

}  // namespace scalebench
