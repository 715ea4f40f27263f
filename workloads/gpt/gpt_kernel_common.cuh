#pragma once
// What the GPT workload's kernel files share: the reductions and grid sizing of workloads/gpu and a
// counter-based hash. Each .cu includes it into its own unnamed namespace.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::gpt {
namespace {

using gpu::block_max;
using gpu::block_sum;
using gpu::grid_for;
using gpu::kWarp;
using gpu::warp_max;
using gpu::warp_sum;

// splitmix64: a counter-based hash, so that parameter values do not depend on the launch shape.
[[maybe_unused]] __device__ __forceinline__ unsigned long long mix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One value into a running softmax denominator (Milakov and Gimelshein's online softmax): `sum`
// holds the sum of exp(x - mx) over the values so far, `mx` their maximum.
[[maybe_unused]] __device__ __forceinline__ void online_softmax_add(float x, float& mx, float& sum) {
  if (x > mx) {
    sum = sum * __expf(mx - x) + 1.f;
    mx = x;
  } else {
    sum += __expf(x - mx);
  }
}

// GELU of the tanh form (GPT-2's, and cuBLASLt's GELU epilogue), and its inner term.
constexpr float kSqrt2OverPi = 0.7978845608028654f;
[[maybe_unused]] __device__ __forceinline__ float gelu_inner(float x) {
  return kSqrt2OverPi * (x + 0.044715f * x * x * x);
}
[[maybe_unused]] __device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + tanhf(gelu_inner(x))); }

// Eight bf16 values of a 16-byte load, as floats.
[[maybe_unused]] __device__ __forceinline__ void unpack8(const uint4& raw, float (&v)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
}

// Blocks for a grid-stride loop over n elements: enough to fill an H100/H200 (132 SMs x 16), no more.
[[maybe_unused]] inline unsigned stride_grid(long long n, int block) {
  const long long g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 132LL * 16 ? g : 132LL * 16);
}

}  // namespace
}  // namespace scalebench::gpt
