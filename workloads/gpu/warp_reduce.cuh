#pragma once
// Warp-level reductions shared by the GPU workloads' kernels. Every lane of the warp must call them
// (full mask); blocks are whole warps.

namespace scalebench::gpu {

// Adds the warp's values into *total with one atomic (lane 0's) per warp, skipped when the sum is 0:
// for counters and exact integer sums, where the order of the additions does not matter.
__device__ __forceinline__ void warp_atomic_add(unsigned long long* total, unsigned long long v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(total, v);
}

}  // namespace scalebench::gpu
