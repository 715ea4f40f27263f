#include <cuda_fp16.h>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/rnn/rnn_kernels.cuh"

namespace scalebench::rnn {

namespace {
constexpr int kThreads = 256;

int blocks_for(std::uint64_t n) {
  const std::uint64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b == 0 ? 1 : b) : 65535 * 8);
}

__device__ float uniform_at(std::uint32_t seed, std::uint64_t i) {
  // splitmix64 of (seed, i): 24 random bits to [0, 1).
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull * (seed + 1ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

template <typename T>
__device__ void store(T* p, std::uint64_t i, float v);
template <>
__device__ void store<float>(float* p, std::uint64_t i, float v) {
  p[i] = v;
}
template <>
__device__ void store<__half>(__half* p, std::uint64_t i, float v) {
  p[i] = __float2half_rn(v);
}
__device__ float load(const float* p, std::uint64_t i) { return p[i]; }
__device__ float load(const __half* p, std::uint64_t i) { return __half2float(p[i]); }

template <typename T>
__global__ void fill_uniform(T* p, std::uint64_t n, float bound, std::uint32_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    store(p, i, (2.0f * uniform_at(seed, i) - 1.0f) * bound);
}

template <typename T>
__global__ void fill_constant(T* p, std::uint64_t n, float value) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    store(p, i, value);
}

template <typename T>
__global__ void sgd(T* w, const T* dw, std::uint64_t n, float lr) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    store(w, i, load(w, i) - lr * load(dw, i));
}
}  // namespace

void launch_fill_uniform(void* p, std::uint64_t n, bool half, float bound, std::uint32_t seed, cudaStream_t stream) {
  if (half)
    fill_uniform<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__half*>(p), n, bound, seed);
  else
    fill_uniform<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(p), n, bound, seed);
  CUDA_CHECK(cudaGetLastError());
}

void launch_fill_constant(void* p, std::uint64_t n, bool half, float value, cudaStream_t stream) {
  if (half)
    fill_constant<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__half*>(p), n, value);
  else
    fill_constant<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(p), n, value);
  CUDA_CHECK(cudaGetLastError());
}

void launch_sgd(void* w, const void* dw, std::uint64_t n, bool half, float lr, cudaStream_t stream) {
  if (half)
    sgd<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<__half*>(w), static_cast<const __half*>(dw), n, lr);
  else
    sgd<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(w), static_cast<const float*>(dw), n, lr);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::rnn
