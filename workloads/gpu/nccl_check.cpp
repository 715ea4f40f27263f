#include "workloads/gpu/nccl_check.hpp"

#include "common/call_failed.hpp"

namespace scalebench {

void throw_nccl_error(const char* file, int line, const char* call, ncclResult_t status) {
  throw_call_failed(file, line, call, ncclGetErrorString(status));
}

}  // namespace scalebench
