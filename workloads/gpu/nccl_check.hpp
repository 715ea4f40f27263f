#pragma once
#include <nccl.h>

namespace scalebench {

// Throws Error with file:line, the call's text and NCCL's own error string (nccl_check.cpp).
[[noreturn]] void throw_nccl_error(const char* file, int line, const char* call, ncclResult_t status);

// ncclInProgress is not a failure: a non-blocking communicator's call that goes on in the background.
#define NCCL_CHECK(call)                                                         \
  do {                                                                           \
    ncclResult_t nccl_check_rc_ = (call);                                        \
    if (nccl_check_rc_ != ncclSuccess && nccl_check_rc_ != ncclInProgress)       \
      ::scalebench::throw_nccl_error(__FILE__, __LINE__, #call, nccl_check_rc_); \
  } while (0)

}  // namespace scalebench
