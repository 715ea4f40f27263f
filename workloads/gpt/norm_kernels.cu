// LayerNorm and RMSNorm, forward and backward.
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

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

}  // namespace

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

}  // namespace scalebench::gpt
