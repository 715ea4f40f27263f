#include "workloads/gpu/cudnn_check.hpp"

#include "common/call_failed.hpp"

namespace scalebench {

std::string cudnn_status_text(cudnnStatus_t st) {
  char msg[512] = {0};
  cudnnGetLastErrorString(msg, sizeof msg);
  std::string s = cudnnGetErrorString(st);
  if (msg[0]) s += std::string(" (") + msg + ")";
  return s;
}

void throw_cudnn_error(const char* file, int line, const char* call, cudnnStatus_t status) {
  throw_call_failed(file, line, call, cudnn_status_text(status));
}

}  // namespace scalebench
