#pragma once
#include <string>

namespace scalebench {

// What the CHECK macros (CUDA, NCCL, cuDNN, cuBLAS, MPI, NVML) throw when a library call fails: an
// Error saying "file:line: call: what", `what` being the library's own error string. Each library's
// thrower (throw_cuda_error, ...) is out of line and ends here, so that a CHECK is a compare at its
// call site and the message is built in one place.
[[noreturn]] void throw_call_failed(const char* file, int line, const char* call, const std::string& what);

}  // namespace scalebench
