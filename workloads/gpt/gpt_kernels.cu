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
__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void init_normal_kernel(float* master, bf16* param, long long n, float std, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long h = mix(seed ^ mix(static_cast<unsigned long long>(i)));
    const float u1 = (static_cast<float>(h >> 40) + 1.f) * (1.f / 16777217.f);  // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) * (1.f / 16777216.f);
    const float z = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    master[i] = std * z;
    param[i] = __float2bfloat16(master[i]);
  }
}

__global__ void init_constant_kernel(float* master, bf16* param, long long n, float value) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    master[i] = value;
    param[i] = __float2bfloat16(value);
  }
}

__global__ void to_bf16_kernel(bf16* out, const float* in, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

__global__ void random_tokens_kernel(int* inputs, int* targets, int B, int T, int vocab, unsigned long long seed,
                                     long long first) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(B) * T) return;
  const long long t = i % T, row = i - t + first;
  auto token = [&](long long at) {
    return static_cast<int>(mix(seed ^ mix(static_cast<unsigned long long>(at))) %
                            static_cast<unsigned long long>(vocab));
  };
  inputs[i] = token(row + t);
  targets[i] = token(row + (t + 1) % T);
}

// One thread per pair of channels.
__global__ void embedding_forward_kernel(bf16* x, const int* tokens, const bf16* wte, const bf16* wpe, int B, int T,
                                         int C) {
  const long long pairs = static_cast<long long>(B) * T * (C / 2);
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= pairs) return;
  const long long row = i / (C / 2);
  const int c = static_cast<int>(i % (C / 2)) * 2;
  const int t = static_cast<int>(row % T);
  const int tok = tokens[row];
  float2 e = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(wte + static_cast<long long>(tok) * C + c));
  if (wpe) {
    const float2 p =
        __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(wpe + static_cast<long long>(t) * C + c));
    e.x += p.x;
    e.y += p.y;
  }
  *reinterpret_cast<__nv_bfloat162*>(x + row * C + c) = __float22bfloat162_rn(e);
}

__global__ void embedding_token_backward_kernel(bf16* dwte, const bf16* dx, const int* tokens, long long rows, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * (C / 2)) return;
  const long long row = i / (C / 2);
  const int c = static_cast<int>(i % (C / 2)) * 2;
  atomicAdd(reinterpret_cast<__nv_bfloat162*>(dwte + static_cast<long long>(tokens[row]) * C + c),
            *reinterpret_cast<const __nv_bfloat162*>(dx + row * C + c));
}

__global__ void embedding_position_backward_kernel(bf16* dwpe, const bf16* dx, int B, int T, int C, bool accumulate) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(T) * C) return;
  const int t = static_cast<int>(i / C), c = static_cast<int>(i % C);
  float acc = accumulate ? __bfloat162float(dwpe[i]) : 0.f;
  for (int b = 0; b < B; ++b) acc += __bfloat162float(dx[(static_cast<long long>(b) * T + t) * C + c]);
  dwpe[i] = __float2bfloat16(acc);
}

// One warp per row.
__global__ void layernorm_forward_kernel(bf16* out, float* mean, float* rstd, const bf16* x, const bf16* w,
                                         const bf16* b, int rows, int C) {
  const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const bf16* xr = x + static_cast<long long>(row) * C;
  float mu = 0.f;  // RMSNorm (mean null): no centring
  if (mean) {
    float s = 0.f;
    for (int c = lane; c < C; c += kWarp) s += __bfloat162float(xr[c]);
    mu = warp_sum(s) / C;
  }
  float v = 0.f;
  for (int c = lane; c < C; c += kWarp) {
    const float d = __bfloat162float(xr[c]) - mu;
    v += d * d;
  }
  const float r = rsqrtf(warp_sum(v) / C + 1e-5f);
  bf16* o = out + static_cast<long long>(row) * C;
  for (int c = lane; c < C; c += kWarp) {
    const float n = (__bfloat162float(xr[c]) - mu) * r;
    o[c] = __float2bfloat16(n * __bfloat162float(w[c]) + (b ? __bfloat162float(b[c]) : 0.f));
  }
  if (lane == 0) {
    if (mean) mean[row] = mu;
    rstd[row] = r;
  }
}

// Adds LayerNorm's input gradient for 8 channels of a row (16-byte loads and store):
// dx += rstd * (dout * w - mean(dout * w) - xhat * mean(dout * w * xhat)).
__device__ __forceinline__ void layernorm_backward_dx8(bf16* dx_acc, const bf16* dout, const bf16* x, const bf16* w,
                                                       float mu, float r, float sd, float sdx) {
  const uint4 dv = *reinterpret_cast<const uint4*>(dout);
  const uint4 xv = *reinterpret_cast<const uint4*>(x);
  const uint4 wv = *reinterpret_cast<const uint4*>(w);
  uint4 av = *reinterpret_cast<const uint4*>(dx_acc);
  const bf16* d8 = reinterpret_cast<const bf16*>(&dv);
  const bf16* x8 = reinterpret_cast<const bf16*>(&xv);
  const bf16* w8 = reinterpret_cast<const bf16*>(&wv);
  bf16* a8 = reinterpret_cast<bf16*>(&av);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float dn = __bfloat162float(d8[k]) * __bfloat162float(w8[k]);
    const float xh = (__bfloat162float(x8[k]) - mu) * r;
    a8[k] = __float2bfloat16(__bfloat162float(a8[k]) + r * (dn - sd - xh * sdx));
  }
  *reinterpret_cast<uint4*>(dx_acc) = av;
}

// The whole LayerNorm backward in one pass over the rows: one warp per row, 16-byte loads; the
// weight and bias gradients summed in shared memory per block, then once per block into fp32.
__global__ void layernorm_backward_kernel(bf16* dx_acc, float* dw32, float* db32, const bf16* dout, const bf16* x,
                                          const float* mean, const float* rstd, const bf16* w, int rows, int C) {
  extern __shared__ float shared[];
  float* sdw = shared;
  float* sdb = shared + C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) sdw[c] = sdb[c] = 0.f;
  __syncthreads();
  const int warps = blockDim.x / kWarp, lane = threadIdx.x % kWarp;
  for (int row = blockIdx.x * warps + threadIdx.x / kWarp; row < rows; row += gridDim.x * warps) {
    const long long base = static_cast<long long>(row) * C;
    const float mu = mean ? mean[row] : 0.f, r = rstd[row];
    float sd = 0.f, sdx = 0.f;
    for (int c = lane * 8; c < C; c += kWarp * 8) {
      const uint4 dv = *reinterpret_cast<const uint4*>(dout + base + c);
      const uint4 xv = *reinterpret_cast<const uint4*>(x + base + c);
      const uint4 wv = *reinterpret_cast<const uint4*>(w + c);
      const bf16* d8 = reinterpret_cast<const bf16*>(&dv);
      const bf16* x8 = reinterpret_cast<const bf16*>(&xv);
      const bf16* w8 = reinterpret_cast<const bf16*>(&wv);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float d = __bfloat162float(d8[k]), xh = (__bfloat162float(x8[k]) - mu) * r;
        const float dn = d * __bfloat162float(w8[k]);
        sd += dn;
        sdx += dn * xh;
        atomicAdd(sdw + c + k, d * xh);
        if (db32) atomicAdd(sdb + c + k, d);  // RMSNorm has no bias
      }
    }
    sd = mean ? warp_sum(sd) / C : 0.f;
    sdx = warp_sum(sdx) / C;
    for (int c = lane * 8; c < C; c += kWarp * 8) {
      layernorm_backward_dx8(dx_acc + base + c, dout + base + c, x + base + c, w + c, mu, r, sd, sdx);
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    atomicAdd(dw32 + c, sdw[c]);
    if (db32) atomicAdd(db32 + c, sdb[c]);
  }
}

// The same with the weight and bias gradients in registers: lane l of every warp always holds
// channels (i * 32 + l) * 8 .. + 7 for i < N (C <= N * 256), so the rows a warp visits add up
// without atomics; the block's warps combine once at the end.
template <int N>
__global__ void __launch_bounds__(256)
    layernorm_backward_regs_kernel(bf16* dx_acc, float* dw32, float* db32, const bf16* dout, const bf16* x,
                                   const float* mean, const float* rstd, const bf16* w, int rows, int C) {
  __shared__ float sdw[N * 256], sdb[N * 256];
  for (int c = threadIdx.x; c < N * 256; c += blockDim.x) sdw[c] = sdb[c] = 0.f;
  float pw[N * 8], pb[N * 8];
#pragma unroll
  for (int k = 0; k < N * 8; ++k) pw[k] = pb[k] = 0.f;
  const int warps = blockDim.x / kWarp, lane = threadIdx.x % kWarp;
  for (int row = blockIdx.x * warps + threadIdx.x / kWarp; row < rows; row += gridDim.x * warps) {
    const long long base = static_cast<long long>(row) * C;
    const float mu = mean ? mean[row] : 0.f, r = rstd[row];
    float sd = 0.f, sdx = 0.f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = (i * kWarp + lane) * 8;
      if (c >= C) break;
      const uint4 dv = *reinterpret_cast<const uint4*>(dout + base + c);
      const uint4 xv = *reinterpret_cast<const uint4*>(x + base + c);
      const uint4 wv = *reinterpret_cast<const uint4*>(w + c);
      const bf16* d8 = reinterpret_cast<const bf16*>(&dv);
      const bf16* x8 = reinterpret_cast<const bf16*>(&xv);
      const bf16* w8 = reinterpret_cast<const bf16*>(&wv);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float d = __bfloat162float(d8[k]), xh = (__bfloat162float(x8[k]) - mu) * r;
        const float dn = d * __bfloat162float(w8[k]);
        sd += dn;
        sdx += dn * xh;
        pw[i * 8 + k] += d * xh;
        pb[i * 8 + k] += d;
      }
    }
    sd = mean ? warp_sum(sd) / C : 0.f;
    sdx = warp_sum(sdx) / C;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = (i * kWarp + lane) * 8;
      if (c >= C) break;
      layernorm_backward_dx8(dx_acc + base + c, dout + base + c, x + base + c, w + c, mu, r, sd, sdx);
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = (i * kWarp + lane) * 8;
    if (c >= C) break;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      atomicAdd(sdw + c + k, pw[i * 8 + k]);
      atomicAdd(sdb + c + k, pb[i * 8 + k]);
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    atomicAdd(dw32 + c, sdw[c]);
    if (db32) atomicAdd(db32 + c, sdb[c]);
  }
}

__global__ void store_gradient_kernel(bf16* grad, const float* value, int n, bool accumulate) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  grad[i] = __float2bfloat16(value[i] + (accumulate ? __bfloat162float(grad[i]) : 0.f));
}

__global__ void add_inplace_kernel(bf16* dst, const bf16* src, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = __float2bfloat16(__bfloat162float(dst[i]) + __bfloat162float(src[i]));
}

// This thread's 8 elements of head_dim (one thread per 16 bytes): their offset in a row-major
// [B, T, row_heads, hd] tensor (row_heads = 3 x NH for packed QKV, of which this is the Q third)
// and in a head-major [B, NH, T, hd] one. False past the end.
__device__ __forceinline__ bool head_offsets(int B, int T, int NH, int hd, int row_heads, long long* rows,
                                             long long* heads) {
  const int vec = hd / 8;
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(B) * T * NH * vec) return false;
  const int d = static_cast<int>(i % vec) * 8;
  long long rest = i / vec;
  const int h = static_cast<int>(rest % NH);
  rest /= NH;
  const int t = static_cast<int>(rest % T);
  const int b = static_cast<int>(rest / T);
  *rows = ((static_cast<long long>(b) * T + t) * row_heads + h) * hd + d;
  *heads = ((static_cast<long long>(b) * NH + h) * T + t) * hd + d;
  return true;
}

__global__ void split_heads_kernel(bf16* q, bf16* k, bf16* v, const bf16* qkv, int B, int T, int NH, int hd) {
  long long src, dst;
  if (!head_offsets(B, T, NH, hd, 3 * NH, &src, &dst)) return;
  const long long third = static_cast<long long>(NH) * hd;
  *reinterpret_cast<uint4*>(q + dst) = *reinterpret_cast<const uint4*>(qkv + src);
  *reinterpret_cast<uint4*>(k + dst) = *reinterpret_cast<const uint4*>(qkv + src + third);
  *reinterpret_cast<uint4*>(v + dst) = *reinterpret_cast<const uint4*>(qkv + src + 2 * third);
}

__global__ void merge_head_grads_kernel(bf16* dqkv, const bf16* dq, const bf16* dk, const bf16* dv, int B, int T,
                                        int NH, int hd) {
  long long dst, src;
  if (!head_offsets(B, T, NH, hd, 3 * NH, &dst, &src)) return;
  const long long third = static_cast<long long>(NH) * hd;
  *reinterpret_cast<uint4*>(dqkv + dst) = *reinterpret_cast<const uint4*>(dq + src);
  *reinterpret_cast<uint4*>(dqkv + dst + third) = *reinterpret_cast<const uint4*>(dk + src);
  *reinterpret_cast<uint4*>(dqkv + dst + 2 * third) = *reinterpret_cast<const uint4*>(dv + src);
}

template <bool kToRows>
__global__ void permute_heads_kernel(bf16* out, const bf16* in, int B, int T, int NH, int hd) {
  long long rows, heads;
  if (!head_offsets(B, T, NH, hd, NH, &rows, &heads)) return;
  if (kToRows) {
    *reinterpret_cast<uint4*>(out + rows) = *reinterpret_cast<const uint4*>(in + heads);
  } else {
    *reinterpret_cast<uint4*>(out + heads) = *reinterpret_cast<const uint4*>(in + rows);
  }
}

// One warp per row of a [T, T] matrix; row i keeps columns 0..i.
__global__ void causal_softmax_forward_kernel(bf16* p, long long rows, int T, int blk) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int i = static_cast<int>(row % T);
  bf16* r = p + row * T;
  float mx = -INFINITY;
  for (int j = lane; j <= i; j += kWarp) mx = fmaxf(mx, __bfloat162float(r[j]));
  mx = warp_max(mx);
  float sum = 0.f;
  for (int j = lane; j <= i; j += kWarp) sum += __expf(__bfloat162float(r[j]) - mx);
  const float inv = 1.f / warp_sum(sum);
  const int end = (i / blk + 1) * blk;
  for (int j = lane; j < end; j += kWarp)
    r[j] = j <= i ? __float2bfloat16(__expf(__bfloat162float(r[j]) - mx) * inv) : __float2bfloat16(0.f);
}

// The same with 16-byte accesses (blk a multiple of 8): one online max/sum pass over columns
// 0..i, one pass writing up to the block's end.
__global__ void causal_softmax_forward_vec_kernel(bf16* p, long long rows, int T, int blk) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int i = static_cast<int>(row % T);
  bf16* r = p + row * T;
  float mx = -INFINITY, sum = 0.f;
  for (int j = lane * 8; j <= i; j += kWarp * 8) {
    const uint4 v = *reinterpret_cast<const uint4*>(r + j);
    const bf16* v8 = reinterpret_cast<const bf16*>(&v);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (j + k > i) break;
      const float x = __bfloat162float(v8[k]);
      if (x > mx) {
        sum = sum * __expf(mx - x) + 1.f;
        mx = x;
      } else {
        sum += __expf(x - mx);
      }
    }
  }
  const float row_mx = warp_max(mx);
  sum = warp_sum(mx == -INFINITY ? 0.f : sum * __expf(mx - row_mx));
  const float inv = 1.f / sum;
  const int end = (i / blk + 1) * blk;
  for (int j = lane * 8; j < end; j += kWarp * 8) {
    uint4 v = *reinterpret_cast<const uint4*>(r + j);
    bf16* v8 = reinterpret_cast<bf16*>(&v);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      v8[k] = j + k <= i ? __float2bfloat16(__expf(__bfloat162float(v8[k]) - row_mx) * inv) : __float2bfloat16(0.f);
    *reinterpret_cast<uint4*>(r + j) = v;
  }
}

__global__ void causal_softmax_backward_vec_kernel(bf16* dp, const bf16* p, long long rows, int T, int blk) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int i = static_cast<int>(row % T);
  bf16* d = dp + row * T;
  const bf16* pr = p + row * T;
  float dot = 0.f;
  for (int j = lane * 8; j <= i; j += kWarp * 8) {
    const uint4 pv = *reinterpret_cast<const uint4*>(pr + j);
    const uint4 dv = *reinterpret_cast<const uint4*>(d + j);
    const bf16* p8 = reinterpret_cast<const bf16*>(&pv);
    const bf16* d8 = reinterpret_cast<const bf16*>(&dv);
#pragma unroll
    for (int k = 0; k < 8; ++k) dot += __bfloat162float(p8[k]) * __bfloat162float(d8[k]);  // P is 0 after i
  }
  dot = warp_sum(dot);
  const int end = (i / blk + 1) * blk;
  for (int j = lane * 8; j < end; j += kWarp * 8) {
    const uint4 pv = *reinterpret_cast<const uint4*>(pr + j);
    uint4 dv = *reinterpret_cast<const uint4*>(d + j);
    const bf16* p8 = reinterpret_cast<const bf16*>(&pv);
    bf16* d8 = reinterpret_cast<bf16*>(&dv);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      d8[k] = j + k <= i ? __float2bfloat16(__bfloat162float(p8[k]) * (__bfloat162float(d8[k]) - dot))
                         : __float2bfloat16(0.f);
    *reinterpret_cast<uint4*>(d + j) = dv;
  }
}

__global__ void causal_softmax_backward_kernel(bf16* dp, const bf16* p, long long rows, int T, int blk) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int i = static_cast<int>(row % T);
  bf16* d = dp + row * T;
  const bf16* pr = p + row * T;
  float dot = 0.f;
  for (int j = lane; j <= i; j += kWarp) dot += __bfloat162float(pr[j]) * __bfloat162float(d[j]);
  dot = warp_sum(dot);
  const int end = (i / blk + 1) * blk;
  for (int j = lane; j < end; j += kWarp)
    d[j] = j <= i ? __float2bfloat16(__bfloat162float(pr[j]) * (__bfloat162float(d[j]) - dot)) : __float2bfloat16(0.f);
}

// One block per row, 16-byte loads: one pass for the running max and sum of exponentials, one pass
// writing the gradient over the logits.
__global__ void cross_entropy_kernel(bf16* logits, float* losses, const int* targets, int V, int Vp, float dscale) {
  const long long row = blockIdx.x;
  bf16* r = logits + row * Vp;
  const int target = targets[row];
  float mx = -INFINITY, sum = 0.f;
  for (int j = threadIdx.x * 8; j < Vp; j += blockDim.x * 8) {
    const uint4 v = *reinterpret_cast<const uint4*>(r + j);
    const bf16* v8 = reinterpret_cast<const bf16*>(&v);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (j + k >= V) break;
      const float x = __bfloat162float(v8[k]);
      if (x > mx) {
        sum = sum * __expf(mx - x) + 1.f;
        mx = x;
      } else {
        sum += __expf(x - mx);
      }
    }
  }
  const float block_mx = block_max(mx);
  sum = block_sum(mx == -INFINITY ? 0.f : sum * __expf(mx - block_mx));
  mx = block_mx;
  const float inv = 1.f / sum;
  const float target_logit = __bfloat162float(r[target]);
  __syncthreads();  // every thread has read the target's logit before it is overwritten
  if (threadIdx.x == 0) losses[row] = logf(sum) + mx - target_logit;
  for (int j = threadIdx.x * 8; j < Vp; j += blockDim.x * 8) {
    uint4 v = *reinterpret_cast<const uint4*>(r + j);
    bf16* v8 = reinterpret_cast<bf16*>(&v);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int col = j + k;
      const float g =
          col < V ? (__expf(__bfloat162float(v8[k]) - mx) * inv - (col == target ? 1.f : 0.f)) * dscale : 0.f;
      v8[k] = __float2bfloat16(g);
    }
    *reinterpret_cast<uint4*>(r + j) = v;
  }
}

__global__ void mean_into_kernel(float* out, const float* in, int n, bool accumulate) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = (accumulate ? out[0] : 0.f) + s / n;
}

__global__ void sum_of_squares_kernel(float* out, const bf16* g, long long n, float weight) {
  float s = 0.f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float x = __bfloat162float(g[i]);
    s += x * x;
  }
  s = block_sum(s);
  if (threadIdx.x == 0) atomicAdd(out, s * weight);
}

__global__ void adamw_kernel(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr,
                             float beta1, float beta2, float eps, float wd, float bc1, float bc2, const float* norm_sq,
                             float clip) {
  float scale = 1.f;
  if (clip > 0.f) {
    const float norm = sqrtf(*norm_sq);
    if (norm > clip) scale = clip / norm;
  }
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float g = __bfloat162float(grad[i]) * scale;
    float p = master[i];
    p -= lr * wd * p;
    const float mi = beta1 * m[i] + (1.f - beta1) * g;
    const float vi = beta2 * v[i] + (1.f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    p -= lr * (mi / bc1) / (sqrtf(vi / bc2) + eps);
    master[i] = p;
    param[i] = __float2bfloat16(p);
  }
}

unsigned stride_grid(long long n, int block) {
  const long long g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 132LL * 16 ? g : 132LL * 16);
}

}  // namespace

void init_normal(float* master, bf16* param, long long n, float std, unsigned long long seed, cudaStream_t s) {
  init_normal_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, n, std, seed);
  CUDA_CHECK(cudaGetLastError());
}

void init_constant(float* master, bf16* param, long long n, float value, cudaStream_t s) {
  init_constant_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void to_bf16(bf16* out, const float* in, long long n, cudaStream_t s) {
  to_bf16_kernel<<<stride_grid(n, 256), 256, 0, s>>>(out, in, n);
  CUDA_CHECK(cudaGetLastError());
}

void random_tokens(int* inputs, int* targets, int B, int T, int vocab, unsigned long long seed, long long first_row,
                   cudaStream_t s) {
  random_tokens_kernel<<<grid_for(static_cast<long long>(B) * T, 256), 256, 0, s>>>(inputs, targets, B, T, vocab, seed,
                                                                                    first_row * T);
  CUDA_CHECK(cudaGetLastError());
}

void embedding_forward(bf16* x, const int* tokens, const bf16* wte, const bf16* wpe, int B, int T, int C,
                       cudaStream_t s) {
  const long long n = static_cast<long long>(B) * T * (C / 2);
  embedding_forward_kernel<<<grid_for(n, 256), 256, 0, s>>>(x, tokens, wte, wpe, B, T, C);
  CUDA_CHECK(cudaGetLastError());
}

void embedding_backward(bf16* dwte, bf16* dwpe, const bf16* dx, const int* tokens, int B, int T, int C,
                        bool accumulate_positions, cudaStream_t s) {
  const long long rows = static_cast<long long>(B) * T;
  embedding_token_backward_kernel<<<grid_for(rows * (C / 2), 256), 256, 0, s>>>(dwte, dx, tokens, rows, C);
  CUDA_CHECK(cudaGetLastError());
  if (dwpe) {
    embedding_position_backward_kernel<<<grid_for(static_cast<long long>(T) * C, 256), 256, 0, s>>>(
        dwpe, dx, B, T, C, accumulate_positions);
    CUDA_CHECK(cudaGetLastError());
  }
}

void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* x, const bf16* w, const bf16* b, int rows,
                       int C, cudaStream_t s) {
  layernorm_forward_kernel<<<grid_for(rows, 8), 256, 0, s>>>(out, mean, rstd, x, w, b, rows, C);
  CUDA_CHECK(cudaGetLastError());
}

void layernorm_backward(bf16* dx_acc, float* dw32, float* db32, const bf16* dout, const bf16* x, const float* mean,
                        const float* rstd, const bf16* w, int rows, int C, cudaStream_t s) {
  if (C % 8 != 0) throw Error("layernorm_backward: width must be a multiple of 8");
  const int n = (C + 255) / 256;
  if (n <= 8) {
    const unsigned blocks = std::min(grid_for(rows, 8), 132u * 2);
    switch (n) {
#define SB_LN_CASE(N)                                                                                              \
  case N:                                                                                                          \
    layernorm_backward_regs_kernel<N><<<blocks, 256, 0, s>>>(dx_acc, dw32, db32, dout, x, mean, rstd, w, rows, C); \
    break;
      SB_LN_CASE(1)
      SB_LN_CASE(2)
      SB_LN_CASE(3)
      SB_LN_CASE(4)
      SB_LN_CASE(5)
      SB_LN_CASE(6)
      SB_LN_CASE(7)
      SB_LN_CASE(8)
#undef SB_LN_CASE
    }
  } else {
    const unsigned blocks = std::min(grid_for(rows, 16), 132u * 2);
    layernorm_backward_kernel<<<blocks, 512, 2 * C * sizeof(float), s>>>(dx_acc, dw32, db32, dout, x, mean, rstd, w,
                                                                         rows, C);
  }
  CUDA_CHECK(cudaGetLastError());
}

void rmsnorm_forward(bf16* out, float* rstd, const bf16* x, const bf16* w, int rows, int C, cudaStream_t s) {
  layernorm_forward(out, nullptr, rstd, x, w, nullptr, rows, C, s);
}

void rmsnorm_backward(bf16* dx_acc, float* dw32, const bf16* dout, const bf16* x, const float* rstd, const bf16* w,
                      int rows, int C, cudaStream_t s) {
  layernorm_backward(dx_acc, dw32, nullptr, dout, x, nullptr, rstd, w, rows, C, s);
}

void store_gradient(bf16* grad, const float* value, int n, bool accumulate, cudaStream_t s) {
  store_gradient_kernel<<<grid_for(n, 256), 256, 0, s>>>(grad, value, n, accumulate);
  CUDA_CHECK(cudaGetLastError());
}

void add_inplace(bf16* dst, const bf16* src, long long n, cudaStream_t s) {
  add_inplace_kernel<<<grid_for(n, 256), 256, 0, s>>>(dst, src, n);
  CUDA_CHECK(cudaGetLastError());
}

void split_heads(bf16* q, bf16* k, bf16* v, const bf16* qkv, int B, int T, int NH, int hd, cudaStream_t s) {
  const long long n = static_cast<long long>(B) * T * NH * (hd / 8);
  split_heads_kernel<<<grid_for(n, 256), 256, 0, s>>>(q, k, v, qkv, B, T, NH, hd);
  CUDA_CHECK(cudaGetLastError());
}

void merge_head_grads(bf16* dqkv, const bf16* dq, const bf16* dk, const bf16* dv, int B, int T, int NH, int hd,
                      cudaStream_t s) {
  const long long n = static_cast<long long>(B) * T * NH * (hd / 8);
  merge_head_grads_kernel<<<grid_for(n, 256), 256, 0, s>>>(dqkv, dq, dk, dv, B, T, NH, hd);
  CUDA_CHECK(cudaGetLastError());
}

void heads_to_rows(bf16* out, const bf16* in, int B, int T, int NH, int hd, cudaStream_t s) {
  const long long n = static_cast<long long>(B) * T * NH * (hd / 8);
  permute_heads_kernel<true><<<grid_for(n, 256), 256, 0, s>>>(out, in, B, T, NH, hd);
  CUDA_CHECK(cudaGetLastError());
}

void rows_to_heads(bf16* out, const bf16* in, int B, int T, int NH, int hd, cudaStream_t s) {
  const long long n = static_cast<long long>(B) * T * NH * (hd / 8);
  permute_heads_kernel<false><<<grid_for(n, 256), 256, 0, s>>>(out, in, B, T, NH, hd);
  CUDA_CHECK(cudaGetLastError());
}

void causal_softmax_forward(bf16* p, int count, int T, int blk, cudaStream_t s) {
  const long long rows = static_cast<long long>(count) * T;
  if (blk % 8 == 0) {
    causal_softmax_forward_vec_kernel<<<grid_for(rows, 8), 256, 0, s>>>(p, rows, T, blk);
  } else {
    causal_softmax_forward_kernel<<<grid_for(rows, 8), 256, 0, s>>>(p, rows, T, blk);
  }
  CUDA_CHECK(cudaGetLastError());
}

void causal_softmax_backward(bf16* dp, const bf16* p, int count, int T, int blk, cudaStream_t s) {
  const long long rows = static_cast<long long>(count) * T;
  if (blk % 8 == 0) {
    causal_softmax_backward_vec_kernel<<<grid_for(rows, 8), 256, 0, s>>>(dp, p, rows, T, blk);
  } else {
    causal_softmax_backward_kernel<<<grid_for(rows, 8), 256, 0, s>>>(dp, p, rows, T, blk);
  }
  CUDA_CHECK(cudaGetLastError());
}

void cross_entropy_fused(bf16* logits, float* losses, const int* targets, int rows, int V, int Vp, float dscale,
                         cudaStream_t s) {
  cross_entropy_kernel<<<rows, 512, 0, s>>>(logits, losses, targets, V, Vp, dscale);
  CUDA_CHECK(cudaGetLastError());
}

void mean_into(float* out, const float* in, int n, bool accumulate, cudaStream_t s) {
  mean_into_kernel<<<1, 1024, 0, s>>>(out, in, n, accumulate);
  CUDA_CHECK(cudaGetLastError());
}

void sum_of_squares(float* out, const bf16* g, long long n, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), s));
  sum_of_squares_kernel<<<stride_grid(n, 512), 512, 0, s>>>(out, g, n, 1.f);
  CUDA_CHECK(cudaGetLastError());
}

void add_sum_of_squares(float* out, const bf16* g, long long n, float weight, cudaStream_t s) {
  sum_of_squares_kernel<<<stride_grid(n, 512), 512, 0, s>>>(out, g, n, weight);
  CUDA_CHECK(cudaGetLastError());
}

void adamw(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr, float beta1,
           float beta2, float eps, float weight_decay, int step, const float* norm_sq, float clip, cudaStream_t s) {
  const float bc1 = 1.f - std::pow(beta1, static_cast<float>(step));
  const float bc2 = 1.f - std::pow(beta2, static_cast<float>(step));
  adamw_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                                                   bc1, bc2, norm_sq, clip);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
