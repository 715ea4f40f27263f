#include <cuda_bf16.h>

#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::gpu {

namespace {
constexpr int kThreads = 256;

__device__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_kernel(__nv_bfloat16* x, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t h = splitmix64(seed * 0x100000001b3ull ^ i);
    // 24 random bits -> [-1, 1)
    const float v = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
    x[i] = __float2bfloat16_rn(v);
  }
}

__global__ void hash_kernel(const unsigned short* x, std::size_t n, unsigned long long* out) {
  unsigned long long acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    acc += splitmix64((static_cast<std::uint64_t>(i) << 16) | x[i]);
  warp_atomic_add(out, acc);
}
}  // namespace

void fill_bf16_pattern(void* x, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_kernel<<<1024, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(x), n, seed);
  CUDA_CHECK(cudaGetLastError());
}

std::uint64_t hash_bf16(const void* x, std::size_t n, cudaStream_t stream) {
  DeviceBuffer sum(sizeof(unsigned long long));
  auto* s = reinterpret_cast<unsigned long long*>(sum.get());
  CUDA_CHECK(cudaMemsetAsync(s, 0, sizeof *s, stream));
  hash_kernel<<<1024, kThreads, 0, stream>>>(static_cast<const unsigned short*>(x), n, s);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long got = 0;
  CUDA_CHECK(cudaMemcpyAsync(&got, s, sizeof got, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return got;
}

}  // namespace scalebench::gpu
