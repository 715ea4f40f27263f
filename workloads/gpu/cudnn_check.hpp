#pragma once
#include <cudnn.h>

#include <string>

namespace scalebench {

// cuDNN's status and, when it left one, its message about the last failed call.
std::string cudnn_status_text(cudnnStatus_t st);

// Throws Error with file:line, the call's text and cudnn_status_text (cudnn_check.cpp).
[[noreturn]] void throw_cudnn_error(const char* file, int line, const char* call, cudnnStatus_t status);

#define CUDNN_CHECK(call)                                                          \
  do {                                                                             \
    cudnnStatus_t cudnn_check_rc_ = (call);                                        \
    if (cudnn_check_rc_ != CUDNN_STATUS_SUCCESS)                                   \
      ::scalebench::throw_cudnn_error(__FILE__, __LINE__, #call, cudnn_check_rc_); \
  } while (0)

}  // namespace scalebench
