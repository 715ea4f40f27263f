#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "workloads/conv/conv_kernels.cuh"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/device_convert.cuh"
#include "workloads/gpu/dtype_dispatch.cuh"

namespace scalebench::conv {

namespace {
using gpu::from_float;
using gpu::to_float;

// One thread per element, grid-stride: the element's memory position gives its logical
// coordinates, whose N,C,H,W-order index picks the value.
template <typename T>
__global__ void fill_kernel(T* dst, long long d0, long long d1, long long d2, long long d3, bool nhwc,
                            TensorRole role) {
  const long long total = d0 * d1 * d2 * d3;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long logical = i;
    if (nhwc) {  // i = ((i0 * d2 + i2) * d3 + i3) * d1 + i1
      const long long i1 = i % d1;
      long long t = i / d1;
      const long long i3 = t % d3;
      t /= d3;
      const long long i2 = t % d2;
      const long long i0 = t / d2;
      logical = ((i0 * d1 + i1) * d2 + i2) * d3 + i3;
    }
    dst[i] = from_float<T>(grid_value(role, static_cast<unsigned long long>(logical)));
  }
}

template <typename T>
__global__ void gather_kernel(const T* src, const long long* offsets, int count, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = to_float(src[offsets[i]]);
}

int blocks_for(long long n, int threads) {
  constexpr long long kMaxBlocks = 65536;  // grid-stride beyond this
  return static_cast<int>(std::min((n + threads - 1) / threads, kMaxBlocks));
}
}  // namespace

void fill_grid(void* dst, gpu::DType kind, const long long dims[4], bool nhwc, TensorRole role, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int blocks = blocks_for(dims[0] * dims[1] * dims[2] * dims[3], kThreads);
  if (blocks == 0) return;
  gpu::with_type(kind, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<T*>(dst), dims[0], dims[1], dims[2], dims[3], nhwc, role);
  });
  CUDA_CHECK(cudaGetLastError());
}

void gather_as_float(const void* src, gpu::DType kind, const long long* offsets, int count, float* out,
                     cudaStream_t stream) {
  constexpr int kThreads = 128;
  if (count <= 0) return;
  const int blocks = (count + kThreads - 1) / kThreads;
  gpu::with_type(kind, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    gather_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(src), offsets, count, out);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::conv
