#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Residual add and ReLU, their gradients, and the per-channel sums of a bias's gradient.
namespace scalebench::train {

namespace {
template <typename T>
__global__ void add_relu_kernel(T* y, const T* z, bool relu, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = to_float(y[i]) + (z ? to_float(z[i]) : 0.0f);
    y[i] = from_float<T>(relu ? fmaxf(v, 0.0f) : v);
  }
}

template <typename T>
__global__ void relu_forward_kernel(const T* x, T* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = from_float<T>(fmaxf(to_float(x[i]), 0.0f));
}

template <typename T>
__global__ void relu_backward_kernel(const T* y, const T* dy, T* dx, bool accumulate, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float g = to_float(y[i]) > 0.0f ? to_float(dy[i]) : 0.0f;
    dx[i] = from_float<T>(accumulate ? to_float(dx[i]) + g : g);
  }
}

template <typename T>
__global__ void add_into_kernel(T* dst, const T* src, bool accumulate, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = accumulate ? from_float<T>(to_float(dst[i]) + to_float(src[i])) : src[i];
}

// Threads of a block cover 32 channels by 8 rows; blocks stride over the rows, one atomic add per
// thread and channel at the end.
template <typename T>
__global__ void bias_grad_kernel(const T* dy, long long rows, int c, float* sums) {
  const int ch = blockIdx.x * 32 + threadIdx.x;
  if (ch >= c) return;
  float acc = 0;
  for (long long r = blockIdx.y * 8LL + threadIdx.y; r < rows; r += gridDim.y * 8LL) acc += to_float(dy[r * c + ch]);
  atomicAdd(&sums[ch], acc);
}
}  // namespace

void add_relu(void* y, const void* z, bool relu, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_relu_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(z), relu, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_forward(const void* x, void* y, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_forward_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_backward(const void* y, const void* dy, void* dx, bool accumulate, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_backward_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(y), static_cast<const T*>(dy),
                                                            static_cast<T*>(dx), accumulate, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_into(void* dst, const void* src, bool accumulate, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_into_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), static_cast<const T*>(src), accumulate, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void bias_grad(const void* dy, DType t, long long rows, int c, float* sums, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((c + 31) / 32), static_cast<unsigned>(std::clamp<long long>(
                                                            (rows + 63) / 64, 1, std::max(1, 4096 / ((c + 31) / 32)))));
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bias_grad_kernel<<<grid, block, 0, s>>>(static_cast<const T*>(dy), rows, c, sums);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
