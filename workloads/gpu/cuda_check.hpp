#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "common/error.hpp"

namespace scalebench {

// One CHECK macro per library: file:line, the call's text and the library's own error string.
#define CUDA_CHECK(call)                                                                                   \
  do {                                                                                                     \
    cudaError_t cuda_check_rc_ = (call);                                                                   \
    if (cuda_check_rc_ != cudaSuccess)                                                                     \
      throw ::scalebench::Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call ": " + \
                                cudaGetErrorString(cuda_check_rc_));                                       \
  } while (0)

#define NCCL_CHECK(call)                                                                                   \
  do {                                                                                                     \
    ncclResult_t nccl_check_rc_ = (call);                                                                  \
    if (nccl_check_rc_ != ncclSuccess && nccl_check_rc_ != ncclInProgress)                                 \
      throw ::scalebench::Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call ": " + \
                                ncclGetErrorString(nccl_check_rc_));                                       \
  } while (0)

}  // namespace scalebench
