#include "workloads/gpu/cublas_check.hpp"

#include "common/call_failed.hpp"

namespace scalebench {

void throw_cublas_error(const char* file, int line, const char* call, cublasStatus_t status) {
  throw_call_failed(file, line, call, cublasLtGetStatusString(status));
}

}  // namespace scalebench
