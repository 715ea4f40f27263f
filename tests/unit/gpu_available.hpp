#pragma once
// Whether this machine shows a GPU: the GPU tests skip themselves where it does not.
#include <cuda_runtime.h>

namespace scalebench::test_support {

inline bool have_gpu() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();  // no GPU leaves an error that the next CUDA call would report
  return ok;
}

}  // namespace scalebench::test_support
