#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/device_convert.cuh"
#include "workloads/gpu/dtype_dispatch.cuh"

// What the train workload's kernel files share: the launch shape of their grid-stride loops, the
// counter-based hash behind their synthetic data and augmentation, 16-byte vectors of channels,
// and the element-type conversions and dispatch of workloads/gpu/.
namespace scalebench::train {

using gpu::from_float;
using gpu::to_float;
using gpu::with_type;

inline constexpr int kThreads = 256;

inline unsigned blocks_for(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, 132LL * 16));
}

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// V consecutive channels of one position, moved as one load or store (16 bytes where the channel
// count allows, else one channel).
template <typename T, int V>
struct alignas(sizeof(T) * V) Channels {
  T v[V];
};
template <int V>
struct alignas(V) Positions {  // the argmax bytes of V channels
  std::uint8_t v[V];
};

// Calls f with V = the most channels of T in 16 bytes or less, a power of two, that divides the
// channel count: 16-byte vectors where it allows, 8- or 4-byte ones where not (NASNet's 44 and
// 22 channels in 16 bits), one channel for an odd count.
template <typename T, typename F>
void with_channel_vector(int c, F&& f) {
  constexpr int kWide = 16 / static_cast<int>(sizeof(T));
  if (c % kWide == 0)
    f(std::integral_constant<int, kWide>{});
  else if (kWide >= 4 && c % (kWide / 2) == 0)
    f(std::integral_constant<int, (kWide >= 4 ? kWide / 2 : 1)>{});
  else if (kWide >= 8 && c % (kWide / 4) == 0)
    f(std::integral_constant<int, (kWide >= 8 ? kWide / 4 : 1)>{});
  else
    f(std::integral_constant<int, 1>{});
}

// Grid rows are images (at most 65,535, a kernel strides past them), columns the threads of one
// image: per-image index arithmetic stays 32-bit.
inline dim3 image_grid(int n, long long per_image) {
  return dim3(static_cast<unsigned>(std::clamp<long long>((per_image + kThreads - 1) / kThreads, 1, 1 << 16)),
              static_cast<unsigned>(std::min(n, 65535)));
}

inline int sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(1, sms);
}

}  // namespace scalebench::train
