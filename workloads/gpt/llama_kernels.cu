#include "workloads/gpt/llama_kernels.cuh"

#include <cuda_bf16.h>

#include <cmath>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::gpt {

namespace {

using gpu::grid_for;

__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + __expf(-x)); }

// N consecutive channels per thread (16-byte accesses for N = 8).
template <int N>
struct alignas(2 * N) Pack {
  bf16 v[N];
};

template <int N>
__global__ void swiglu_forward_kernel(bf16* h, const bf16* gu, long long rows, int mlp) {
  const long long per_row = mlp / N, i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * per_row) return;
  const long long row = i / per_row;
  const int c = static_cast<int>(i % per_row) * N;
  const Pack<N> g = *reinterpret_cast<const Pack<N>*>(gu + row * 2 * mlp + c);
  const Pack<N> u = *reinterpret_cast<const Pack<N>*>(gu + row * 2 * mlp + mlp + c);
  Pack<N> out;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const float x = __bfloat162float(g.v[k]);
    out.v[k] = __float2bfloat16(x * sigmoid(x) * __bfloat162float(u.v[k]));
  }
  *reinterpret_cast<Pack<N>*>(h + row * mlp + c) = out;
}

template <int N>
__global__ void swiglu_backward_kernel(bf16* dgu, const bf16* dh, const bf16* gu, long long rows, int mlp) {
  const long long per_row = mlp / N, i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * per_row) return;
  const long long row = i / per_row;
  const int c = static_cast<int>(i % per_row) * N;
  const Pack<N> g = *reinterpret_cast<const Pack<N>*>(gu + row * 2 * mlp + c);
  const Pack<N> u = *reinterpret_cast<const Pack<N>*>(gu + row * 2 * mlp + mlp + c);
  const Pack<N> d = *reinterpret_cast<const Pack<N>*>(dh + row * mlp + c);
  Pack<N> dg, du;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const float x = __bfloat162float(g.v[k]), up = __bfloat162float(u.v[k]), dy = __bfloat162float(d.v[k]);
    const float sg = sigmoid(x), silu = x * sg;
    dg.v[k] = __float2bfloat16(dy * up * sg * (1.f + x * (1.f - sg)));
    du.v[k] = __float2bfloat16(dy * silu);
  }
  *reinterpret_cast<Pack<N>*>(dgu + row * 2 * mlp + c) = dg;
  *reinterpret_cast<Pack<N>*>(dgu + row * 2 * mlp + mlp + c) = du;
}

__global__ void rotary_table_kernel(float2* table, int T, int hd, double theta) {
  const int half = hd / 2, i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= T * half) return;
  const int t = i / half, j = i % half;
  const double angle = t * pow(theta, -2.0 * j / hd);
  double sn = 0, cs = 0;
  sincos(angle, &sn, &cs);
  table[i] = make_float2(static_cast<float>(cs), static_cast<float>(sn));
}

// One thread per 8 pairs: channels c..c+7 of a head's first half and c+hd/2.. of its second.
__global__ void rotary_kernel(bf16* x, const float2* table, long long rows, int T, int heads, int hd, int row_width,
                              bool inverse, const int* positions) {
  const int half = hd / 2, per_head = half / 8;
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * heads * per_head) return;
  const long long row = i / (static_cast<long long>(heads) * per_head);
  const int rest = static_cast<int>(i % (static_cast<long long>(heads) * per_head));
  const int head = rest / per_head, c = (rest % per_head) * 8;
  const int t = positions ? positions[row] : static_cast<int>(row % T);
  bf16* lo = x + row * row_width + static_cast<long long>(head) * hd + c;
  bf16* hi = lo + half;
  Pack<8> a = *reinterpret_cast<const Pack<8>*>(lo), b = *reinterpret_cast<const Pack<8>*>(hi);
  const float sign = inverse ? -1.f : 1.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float2 cs = table[static_cast<long long>(t) * half + c + k];
    const float s = sign * cs.y, x1 = __bfloat162float(a.v[k]), x2 = __bfloat162float(b.v[k]);
    a.v[k] = __float2bfloat16(x1 * cs.x - x2 * s);
    b.v[k] = __float2bfloat16(x2 * cs.x + x1 * s);
  }
  *reinterpret_cast<Pack<8>*>(lo) = a;
  *reinterpret_cast<Pack<8>*>(hi) = b;
}

}  // namespace

void swiglu_forward(bf16* h, const bf16* gu, long long rows, int mlp, cudaStream_t s) {
  if (mlp % 2 != 0) throw Error("swiglu: the MLP width must be even");
  if (mlp % 8 == 0) {
    swiglu_forward_kernel<8><<<grid_for(rows * (mlp / 8), 256), 256, 0, s>>>(h, gu, rows, mlp);
  } else {
    swiglu_forward_kernel<2><<<grid_for(rows * (mlp / 2), 256), 256, 0, s>>>(h, gu, rows, mlp);
  }
  CUDA_CHECK(cudaGetLastError());
}

void swiglu_backward(bf16* dgu, const bf16* dh, const bf16* gu, long long rows, int mlp, cudaStream_t s) {
  if (mlp % 2 != 0) throw Error("swiglu: the MLP width must be even");
  if (mlp % 8 == 0) {
    swiglu_backward_kernel<8><<<grid_for(rows * (mlp / 8), 256), 256, 0, s>>>(dgu, dh, gu, rows, mlp);
  } else {
    swiglu_backward_kernel<2><<<grid_for(rows * (mlp / 2), 256), 256, 0, s>>>(dgu, dh, gu, rows, mlp);
  }
  CUDA_CHECK(cudaGetLastError());
}

void rotary_table(float2* table, int T, int hd, double theta, cudaStream_t s) {
  rotary_table_kernel<<<grid_for(static_cast<long long>(T) * (hd / 2), 256), 256, 0, s>>>(table, T, hd, theta);
  CUDA_CHECK(cudaGetLastError());
}

void rotary(bf16* x, const float2* table, long long rows, int T, int heads, int hd, int row_width, bool inverse,
            cudaStream_t s, const int* positions) {
  if (hd % 16 != 0) throw Error("rotary: the head width must be a multiple of 16");
  const long long n = rows * heads * (hd / 16);
  if (n == 0) return;
  rotary_kernel<<<grid_for(n, 256), 256, 0, s>>>(x, table, rows, T, heads, hd, row_width, inverse, positions);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
