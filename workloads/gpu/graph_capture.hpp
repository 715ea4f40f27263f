#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::gpu {

// What `body` enqueues on `s`, captured in `mode` (relaxed by default: NCCL's enqueue and cuDNN may
// make calls that a stricter mode refuses) and instantiated with cudaGraphInstantiate's `flags`.
// If `body` throws, the capture is ended, its graph freed and the last CUDA error cleared before
// the exception goes on.
GraphExec capture_graph(cudaStream_t s, const std::function<void()>& body, unsigned long long flags = 0,
                        cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed);

}  // namespace scalebench::gpu
