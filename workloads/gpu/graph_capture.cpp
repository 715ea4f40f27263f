#include "workloads/gpu/graph_capture.hpp"

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

GraphExec capture_graph(cudaStream_t s, const std::function<void()>& body, unsigned long long flags,
                        cudaStreamCaptureMode mode) {
  CUDA_CHECK(cudaStreamBeginCapture(s, mode));
  try {
    body();
  } catch (...) {
    UniqueHandle<cudaGraph_t, FreeWith<cudaGraphDestroy>> partial;
    (void)cudaStreamEndCapture(s, partial.out());
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t g = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  return GraphExec(g, flags);  // frees the captured graph
}

}  // namespace scalebench::gpu
