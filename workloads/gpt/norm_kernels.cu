// LayerNorm and RMSNorm, forward and backward.
#include <map>
#include <utility>

#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

// The sums over a block of two values at once; every thread gets both.
__device__ __forceinline__ float2 block_sum2(float a, float b) {
  __shared__ float2 part[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  a = warp_sum(a);
  b = warp_sum(b);
  __syncthreads();  // part[] may still be read for the previous row
  if (lane == 0) part[warp] = make_float2(a, b);
  __syncthreads();
  const float2 v = lane < warps ? part[lane] : make_float2(0.f, 0.f);
  return make_float2(warp_sum(v.x), warp_sum(v.y));
}

// LayerNorm's (or RMSNorm's) forward, a block per row and a thread per 8 channels: the row is read
// once, with 16-byte loads, and its mean and variance are taken from registers.
__global__ void layernorm_forward_kernel(bf16* out, float* mean, float* rstd, const bf16* x, const bf16* w,
                                         const bf16* b, int C) {
  const long long at = static_cast<long long>(blockIdx.x) * C + threadIdx.x * 8;
  const bool active = threadIdx.x * 8 < C;
  float v[8];
  {
    const uint4 xv = active ? *reinterpret_cast<const uint4*>(x + at) : uint4{};
    const bf16* x8 = reinterpret_cast<const bf16*>(&xv);
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = __bfloat162float(x8[k]);
  }
  float mu = 0.f;  // RMSNorm (mean null): no centring
  if (mean) {
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) sum += v[k];
    mu = block_sum(sum) / C;
  }
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) sq += active ? (v[k] - mu) * (v[k] - mu) : 0.f;
  const float r = rsqrtf(block_sum(sq) / C + 1e-5f);
  if (threadIdx.x == 0) {
    if (mean) mean[blockIdx.x] = mu;
    rstd[blockIdx.x] = r;
  }
  if (!active) return;
  const uint4 wv = *reinterpret_cast<const uint4*>(w + threadIdx.x * 8);
  const uint4 bv = b ? *reinterpret_cast<const uint4*>(b + threadIdx.x * 8) : uint4{};
  const bf16* w8 = reinterpret_cast<const bf16*>(&wv);
  const bf16* b8 = reinterpret_cast<const bf16*>(&bv);
  uint4 ov;
  bf16* o8 = reinterpret_cast<bf16*>(&ov);
#pragma unroll
  for (int k = 0; k < 8; ++k)
    o8[k] = __float2bfloat16((v[k] - mu) * r * __bfloat162float(w8[k]) + __bfloat162float(b8[k]));
  *reinterpret_cast<uint4*>(out + at) = ov;
}

// LayerNorm's backward, a block per row at a time and a thread per 8 channels (16-byte loads), so
// that a row's dout, x and dx_acc are each read once and stay in registers:
//   dx += rstd * (dout * w - mean(dout * w) - xhat * mean(dout * w * xhat)).
// The weight and bias gradients' sums over the block's rows stay in registers too and are written
// once per block to `partials` ([gridDim.x][2][C]); layernorm_param_grads_kernel adds them up, in
// a fixed order, so the result does not depend on timing (no atomics).
__global__ void layernorm_backward_kernel(bf16* dx_acc, float* partials, const bf16* dout, const bf16* x,
                                          const float* mean, const float* rstd, const bf16* w, int rows, int C) {
  const int c = threadIdx.x * 8;
  const bool active = c < C;
  float wf[8], pw[8], pb[8];
  {
    const uint4 wv = active ? *reinterpret_cast<const uint4*>(w + c) : uint4{};
    const bf16* w8 = reinterpret_cast<const bf16*>(&wv);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      wf[k] = __bfloat162float(w8[k]);
      pw[k] = pb[k] = 0.f;
    }
  }
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long at = static_cast<long long>(row) * C + c;
    uint4 dv{}, xv{}, av{};
    if (active) {
      dv = *reinterpret_cast<const uint4*>(dout + at);
      xv = *reinterpret_cast<const uint4*>(x + at);
      av = *reinterpret_cast<const uint4*>(dx_acc + at);
    }
    const float mu = mean ? mean[row] : 0.f, r = rstd[row];
    const bf16* d8 = reinterpret_cast<const bf16*>(&dv);
    const bf16* x8 = reinterpret_cast<const bf16*>(&xv);
    float sd = 0.f, sdx = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float d = __bfloat162float(d8[k]), xh = (__bfloat162float(x8[k]) - mu) * r;
      const float dn = d * wf[k];
      sd += dn;
      sdx += dn * xh;
      pw[k] += d * xh;
      pb[k] += d;
    }
    const float2 sums = block_sum2(sd, sdx);
    sd = mean ? sums.x / C : 0.f;  // RMSNorm (mean null): no centring
    sdx = sums.y / C;
    if (!active) continue;
    bf16* a8 = reinterpret_cast<bf16*>(&av);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float dn = __bfloat162float(d8[k]) * wf[k];
      const float xh = (__bfloat162float(x8[k]) - mu) * r;
      a8[k] = __float2bfloat16(__bfloat162float(a8[k]) + r * (dn - sd - xh * sdx));
    }
    *reinterpret_cast<uint4*>(dx_acc + at) = av;
  }
  if (!active) return;
  float* out = partials + static_cast<long long>(blockIdx.x) * 2 * C + c;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    out[k] = pw[k];
    out[C + k] = pb[k];
  }
}

// grad (+)= the sum of the blocks' partials, as bf16: column j < C is the weight's channel j,
// column C + j the bias's. A 32 x 32 block sums 32 columns, each thread a 32nd of the partials.
__global__ void layernorm_param_grads_kernel(bf16* dw, bf16* db, bool accumulate, const float* partials, int blocks,
                                             int C) {
  __shared__ float part[32][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int cols = db ? 2 * C : C;
  float v = 0.f;
  if (col < cols) {
#pragma unroll 8
    for (int b = threadIdx.y; b < blocks; b += 32) v += partials[static_cast<long long>(b) * 2 * C + col];
  }
  part[threadIdx.y][threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.y != 0 || col >= cols) return;
  float sum = 0.f;
#pragma unroll 8
  for (int k = 0; k < 32; ++k) sum += part[k][threadIdx.x];
  bf16* grad = col < C ? dw + col : db + (col - C);
  *grad = __float2bfloat16(accumulate ? __bfloat162float(*grad) + sum : sum);
}

constexpr int kMaxNormWidth = 8 * 1024;  // a thread per 8 channels, 1024 threads

int norm_threads(int C) { return (C / 8 + kWarp - 1) / kWarp * kWarp; }

// How many backward blocks of width C the current GPU holds at once. Asked of the runtime once per
// GPU and width: a step launches a norm backward per norm, and the answer does not change.
int resident_backward_blocks(int C) {
  thread_local std::map<std::pair<int, int>, int> known;  // (device, C) -> blocks
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::pair<int, int> key{device, C};
  if (const auto it = known.find(key); it != known.end()) return it->second;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layernorm_backward_kernel, norm_threads(C), 0));
  return known[key] = sms * std::max(per_sm, 1);
}

// As many blocks as fit on the GPU at once, but no fewer than 4 rows each: the partials stay small.
int backward_blocks(int rows, int C) { return std::max(1, std::min(resident_backward_blocks(C), (rows + 3) / 4)); }

}  // namespace

void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* x, const bf16* w, const bf16* b, int rows,
                       int C, cudaStream_t s) {
  if (C % 8 != 0 || C > kMaxNormWidth) throw Error("layernorm_forward: width must be a multiple of 8, at most 8192");
  layernorm_forward_kernel<<<rows, norm_threads(C), 0, s>>>(out, mean, rstd, x, w, b, C);
  CUDA_CHECK(cudaGetLastError());
}

long long layernorm_backward_partials(int rows, int C) { return 2LL * C * backward_blocks(rows, C); }

void layernorm_backward(bf16* dx_acc, bf16* dw, bf16* db, bool accumulate, float* partials, const bf16* dout,
                        const bf16* x, const float* mean, const float* rstd, const bf16* w, int rows, int C,
                        cudaStream_t s) {
  if (C % 8 != 0 || C > kMaxNormWidth) throw Error("layernorm_backward: width must be a multiple of 8, at most 8192");
  const int blocks = backward_blocks(rows, C);
  layernorm_backward_kernel<<<blocks, norm_threads(C), 0, s>>>(dx_acc, partials, dout, x, mean, rstd, w, rows, C);
  CUDA_CHECK(cudaGetLastError());
  const int cols = db ? 2 * C : C;
  layernorm_param_grads_kernel<<<grid_for(cols, 32), dim3(32, 32), 0, s>>>(dw, db, accumulate, partials, blocks, C);
  CUDA_CHECK(cudaGetLastError());
}

void rmsnorm_forward(bf16* out, float* rstd, const bf16* x, const bf16* w, int rows, int C, cudaStream_t s) {
  layernorm_forward(out, nullptr, rstd, x, w, nullptr, rows, C, s);
}

void rmsnorm_backward(bf16* dx_acc, bf16* dw, bool accumulate, float* partials, const bf16* dout, const bf16* x,
                      const float* rstd, const bf16* w, int rows, int C, cudaStream_t s) {
  layernorm_backward(dx_acc, dw, nullptr, accumulate, partials, dout, x, nullptr, rstd, w, rows, C, s);
}

}  // namespace scalebench::gpt
