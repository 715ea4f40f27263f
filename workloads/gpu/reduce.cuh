#pragma once
// Warp and block reductions, and grid sizing for one thread per element, shared by the GPU
// workloads' kernels. Every lane of a warp must call the warp functions (full mask), and blocks are
// whole warps.
#include <cuda_runtime.h>

#include <cmath>

namespace scalebench::gpu {

constexpr int kWarp = 32;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Sum over a block of up to 1024 threads (a multiple of 32); every thread gets the result.
__device__ inline float block_sum(float v) {
  __shared__ float part[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < warps ? part[lane] : 0.f;
  return warp_sum(v);
}
__device__ inline float block_max(float v) {
  __shared__ float part[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < warps ? part[lane] : -INFINITY;
  return warp_max(v);
}

inline unsigned grid_for(long long n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// Adds the warp's values into *total with one atomic (lane 0's) per warp, skipped when the sum is 0:
// for counters and exact integer sums, where the order of the additions does not matter.
__device__ __forceinline__ void warp_atomic_add(unsigned long long* total, unsigned long long v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(total, v);
}

}  // namespace scalebench::gpu
