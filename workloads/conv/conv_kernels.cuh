#pragma once
#include <cuda_runtime.h>

#include "workloads/conv/conv_values.hpp"
#include "workloads/gpu/dtype.hpp"

// The conv workload's own kernels: filling a tensor with grid_value in any layout, and reading a
// few sampled elements back as fp32 for the check.
namespace scalebench::conv {

// `kind`: float32, float16 or bfloat16.

// Writes grid_value(role, logical index) into every element of a d0 x d1 x d2 x d3 tensor
// (N,C,H,W or K,C,R,S) stored NCHW, or NHWC when `nhwc` (channels last).
void fill_grid(void* dst, gpu::DType kind, const long long dims[4], bool nhwc, TensorRole role, cudaStream_t stream);

// out[i] = float(src[offsets[i]]) for i < count; offsets and out are device memory.
void gather_as_float(const void* src, gpu::DType kind, const long long* offsets, int count, float* out,
                     cudaStream_t stream);

}  // namespace scalebench::conv
