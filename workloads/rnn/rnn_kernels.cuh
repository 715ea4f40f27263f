#pragma once
#include <cuda_runtime.h>

#include <cstdint>

// Host-side launchers of the rnn workload's kernels (rnn_kernels.cu). Each launches on `stream`
// of the current device and throws on a launch error. `half` selects fp16 elements, else fp32.
namespace scalebench::rnn {

// Fills n elements with values uniform in [-bound, bound), a hash of (seed, index): the same on
// every run and GPU.
void launch_fill_uniform(void* p, std::uint64_t n, bool half, float bound, std::uint32_t seed, cudaStream_t stream);

// Fills n elements with `value`.
void launch_fill_constant(void* p, std::uint64_t n, bool half, float value, cudaStream_t stream);

// The SGD step of the training step: w -= lr * dw over n elements (the whole weight space, as
// one flat buffer), computed in fp32 and stored back in the weights' format.
void launch_sgd(void* w, const void* dw, std::uint64_t n, bool half, float lr, cudaStream_t stream);

}  // namespace scalebench::rnn
