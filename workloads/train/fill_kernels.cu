#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Synthetic weights, images and labels, and fp32 values converted to the compute type.
namespace scalebench::train {

namespace {
template <typename T>
__global__ void fill_normal_kernel(T* dst, long long n, float mean, float std, std::uint64_t seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) / 16777217.0f;  // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) / 16777216.0f;
    dst[i] = from_float<T>(mean + std * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

__global__ void fill_value_kernel(float* dst, long long n, float v) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = v;
}

__global__ void fill_labels_kernel(int* dst, long long n, int classes, std::uint64_t seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = static_cast<int>(mix(seed ^ (0x5bd1e995ULL * (i + 1))) % static_cast<std::uint64_t>(classes));
}

template <typename T>
__global__ void convert_kernel(const float* src, T* dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = from_float<T>(src[i]);
}
}  // namespace

void fill_normal(void* dst, DType t, long long n, float mean, float std, std::uint64_t seed, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_normal_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, mean, std, seed);
  });
  CUDA_CHECK(cudaGetLastError());
}

void fill_value(float* dst, long long n, float value, cudaStream_t s) {
  fill_value_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void fill_labels(int* dst, long long n, int classes, std::uint64_t seed, cudaStream_t s) {
  fill_labels_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, n, classes, seed);
  CUDA_CHECK(cudaGetLastError());
}

void convert_from_float(const float* src, void* dst, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    convert_kernel<<<blocks_for(n), kThreads, 0, s>>>(src, static_cast<T*>(dst), n);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
