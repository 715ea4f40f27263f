#pragma once
#include <cublasLt.h>

namespace scalebench {

// Throws Error with file:line, the call's text and cuBLAS's own status string (cublas_check.cpp).
[[noreturn]] void throw_cublas_error(const char* file, int line, const char* call, cublasStatus_t status);

// cuBLAS(Lt)'s CHECK macro.
#define CUBLAS_CHECK(call)                                                           \
  do {                                                                               \
    cublasStatus_t cublas_check_rc_ = (call);                                        \
    if (cublas_check_rc_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::scalebench::throw_cublas_error(__FILE__, __LINE__, #call, cublas_check_rc_); \
  } while (0)

}  // namespace scalebench
