#include "workloads/copy/copy_kernels.cuh"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "workloads/copy/copy_pattern.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::copy {

namespace {

constexpr int kUnroll = 8;  // 16-byte loads in flight per thread before their stores
constexpr int kPatternThreads = 256;

__global__ void __launch_bounds__(kSmCopyThreads)
    sm_copy_kernel(uint4* dst, const uint4* src, std::uint64_t n, int loops, unsigned char* dst_tail,
                   const unsigned char* src_tail, int tail) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int loop = 0; loop < loops; ++loop) {
    std::uint64_t i = first;
    for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) v[k] = src[i + k * stride];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) dst[i + k * stride] = v[k];
    }
    for (; i < n; i += stride) dst[i] = src[i];
    if (first == 0)
      for (int b = 0; b < tail; ++b) dst_tail[b] = src_tail[b];
    // Every loop is a full copy: keep the compiler from merging or dropping repeated ones.
    asm volatile("" ::: "memory");
  }
}

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(volatile int* latch, volatile int* timed_out, std::uint64_t timeout_ns) {
  const std::uint64_t end = global_ns() + timeout_ns;
  while (*latch == 0) {
    if (global_ns() > end) {
      *timed_out = 1;
      return;
    }
  }
}

__global__ void fill_kernel(std::uint32_t* p, std::uint64_t bytes, std::uint32_t seed) {
  const std::uint64_t words = bytes / 4;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t i = first; i < words; i += stride) p[i] = pattern_word(i, seed);
  if (first == 0)
    for (std::uint64_t b = words * 4; b < bytes; ++b) reinterpret_cast<std::uint8_t*>(p)[b] = pattern_byte(b, seed);
}

__global__ void count_kernel(const std::uint32_t* p, std::uint64_t bytes, std::uint32_t seed,
                             unsigned long long* counter) {
  const std::uint64_t words = bytes / 4;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long wrong = 0;
  for (std::uint64_t i = first; i < words; i += stride) wrong += p[i] != pattern_word(i, seed);
  if (first == 0)
    for (std::uint64_t b = words * 4; b < bytes; ++b)
      wrong += reinterpret_cast<const std::uint8_t*>(p)[b] != pattern_byte(b, seed);
  gpu::warp_atomic_add(counter, wrong);
}

int pattern_blocks(std::uint64_t bytes) {
  int device = 0, sms = 1;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint64_t needed = (bytes / 4 + kPatternThreads - 1) / kPatternThreads;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(needed, 4ull * sms)));
}

}  // namespace

void launch_sm_copy(void* dst, const void* src, std::uint64_t bytes, int loops, int blocks, int threads,
                    cudaStream_t stream) {
  if (threads < 1 || threads > kSmCopyThreads || blocks < 1)
    throw Error("SM copy launch of " + std::to_string(blocks) + " x " + std::to_string(threads) + " threads");
  const std::uint64_t n = bytes / 16;
  const int tail = static_cast<int>(bytes % 16);
  sm_copy_kernel<<<blocks, threads, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), n, loops,
                                                 static_cast<unsigned char*>(dst) + n * 16,
                                                 static_cast<const unsigned char*>(src) + n * 16, tail);
  CUDA_CHECK(cudaGetLastError());
}

int sm_copy_occupancy() {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sm_copy_kernel, kSmCopyThreads, 0));
  return blocks;
}

void launch_spin(volatile int* latch, volatile int* timed_out, std::uint64_t timeout_ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(latch, timed_out, timeout_ns);
  CUDA_CHECK(cudaGetLastError());
}

void launch_fill(void* p, std::uint64_t bytes, std::uint32_t seed, cudaStream_t stream) {
  fill_kernel<<<pattern_blocks(bytes), kPatternThreads, 0, stream>>>(static_cast<std::uint32_t*>(p), bytes, seed);
  CUDA_CHECK(cudaGetLastError());
}

void launch_count_mismatches(const void* p, std::uint64_t bytes, std::uint32_t seed, unsigned long long* counter,
                             cudaStream_t stream) {
  count_kernel<<<pattern_blocks(bytes), kPatternThreads, 0, stream>>>(static_cast<const std::uint32_t*>(p), bytes, seed,
                                                                      counter);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::copy
