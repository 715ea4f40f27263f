#pragma once
#include <cuda_runtime.h>

namespace scalebench {

// Throws Error with file:line, the call's text and CUDA's own error string (cuda_check.cpp).
[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call, cudaError_t status);

// One CHECK macro per library (NCCL_CHECK in nccl_check.hpp, CUDNN_CHECK in cudnn_check.hpp,
// CUBLAS_CHECK in cublas_check.hpp, MPI_CHECK in mpi_check.hpp): a compare inline, the message
// built out of line.
#define CUDA_CHECK(call)                                                                                          \
  do {                                                                                                            \
    cudaError_t cuda_check_rc_ = (call);                                                                          \
    if (cuda_check_rc_ != cudaSuccess) ::scalebench::throw_cuda_error(__FILE__, __LINE__, #call, cuda_check_rc_); \
  } while (0)

}  // namespace scalebench
