// Gradient and residual arithmetic, the fused softmax cross-entropy, the global gradient norm and AdamW.
#include <algorithm>
#include <cstdint>

#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

__global__ void add_residual_kernel(bf16* y, const bf16* residual, const bf16* bias, long long n, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float b = bias ? __bfloat162float(bias[i % C]) : 0.f;
  y[i] = __float2bfloat16(__bfloat162float(y[i]) + __bfloat162float(residual[i]) + b);
}

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
      online_softmax_add(__bfloat162float(v8[k]), mx, sum);
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

__global__ void mean_into_kernel(float* out, const float* in, int n, float of, bool accumulate) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = (accumulate ? out[0] : 0.f) + s / of;
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

__global__ void advance_adam_step_kernel(int* step, float* bias_correction, float beta1, float beta2) {
  const int t = ++*step;
  bias_correction[0] = 1.f - powf(beta1, static_cast<float>(t));
  bias_correction[1] = 1.f - powf(beta2, static_cast<float>(t));
}

// AdamW's factors for this step: the bias corrections, and the gradients' clip by the global norm.
struct AdamwStep {
  float lr, beta1, beta2, eps, wd, bc1, bc2, scale;
};

__device__ AdamwStep adamw_step(float lr, float beta1, float beta2, float eps, float wd, const float* bias_correction,
                                const float* norm_sq, float clip) {
  float scale = 1.f;
  if (clip > 0.f) {
    const float norm = sqrtf(*norm_sq);
    if (norm > clip) scale = clip / norm;
  }
  return {lr, beta1, beta2, eps, wd, bias_correction[0], bias_correction[1], scale};
}

// One parameter's update: the same arithmetic in both kernels, so both give the same bits.
__device__ __forceinline__ void adamw_update(const AdamwStep& a, float grad, float& p, float& m, float& v) {
  const float g = grad * a.scale;
  p -= a.lr * a.wd * p;
  m = a.beta1 * m + (1.f - a.beta1) * g;
  v = a.beta2 * v + (1.f - a.beta2) * g * g;
  p -= a.lr * (m / a.bc1) / (sqrtf(v / a.bc2) + a.eps);
}

// Parameter i, read and written one element at a time.
__device__ __forceinline__ void adamw_one(const AdamwStep& a, long long i, float* master, bf16* param, const bf16* grad,
                                          float* m, float* v) {
  float p = master[i], mi = m[i], vi = v[i];
  adamw_update(a, __bfloat162float(grad[i]), p, mi, vi);
  m[i] = mi;
  v[i] = vi;
  master[i] = p;
  param[i] = __float2bfloat16(p);
}

__global__ void adamw_kernel(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr,
                             float beta1, float beta2, float eps, float wd, const float* bias_correction,
                             const float* norm_sq, float clip) {
  const AdamwStep a = adamw_step(lr, beta1, beta2, eps, wd, bias_correction, norm_sq, clip);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    adamw_one(a, i, master, param, grad, m, v);
}

struct alignas(8) Bf16x4 {
  __nv_bfloat162 lo, hi;
};

// Four parameters a thread, each array read and written in 16- (fp32) or 8-byte (bf16) accesses:
// the optimizer is a pass over 28 bytes a parameter, bound by memory. The last n % 4 by block 0.
__global__ void adamw4_kernel(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr,
                              float beta1, float beta2, float eps, float wd, const float* bias_correction,
                              const float* norm_sq, float clip) {
  const AdamwStep a = adamw_step(lr, beta1, beta2, eps, wd, bias_correction, norm_sq, clip);
  const long long n4 = n / 4;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 p = reinterpret_cast<float4*>(master)[i], mi = reinterpret_cast<float4*>(m)[i],
           vi = reinterpret_cast<float4*>(v)[i];
    const Bf16x4 g = reinterpret_cast<const Bf16x4*>(grad)[i];
    const float2 g01 = __bfloat1622float2(g.lo), g23 = __bfloat1622float2(g.hi);
    adamw_update(a, g01.x, p.x, mi.x, vi.x);
    adamw_update(a, g01.y, p.y, mi.y, vi.y);
    adamw_update(a, g23.x, p.z, mi.z, vi.z);
    adamw_update(a, g23.y, p.w, mi.w, vi.w);
    reinterpret_cast<float4*>(m)[i] = mi;
    reinterpret_cast<float4*>(v)[i] = vi;
    reinterpret_cast<float4*>(master)[i] = p;
    reinterpret_cast<Bf16x4*>(param)[i] = {__floats2bfloat162_rn(p.x, p.y), __floats2bfloat162_rn(p.z, p.w)};
  }
  const long long j = 4 * n4 + threadIdx.x;
  if (blockIdx.x == 0 && j < n) adamw_one(a, j, master, param, grad, m, v);
}

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

}  // namespace

void add_inplace(bf16* dst, const bf16* src, long long n, cudaStream_t s) {
  add_residual_kernel<<<grid_for(n, 256), 256, 0, s>>>(dst, src, nullptr, n, 1);  // no bias
  CUDA_CHECK(cudaGetLastError());
}

void add_residual(bf16* y, const bf16* residual, const bf16* bias, long long rows, int C, cudaStream_t s) {
  add_residual_kernel<<<grid_for(rows * C, 256), 256, 0, s>>>(y, residual, bias, rows * C, C);
  CUDA_CHECK(cudaGetLastError());
}

void cross_entropy_fused(bf16* logits, float* losses, const int* targets, int rows, int V, int Vp, float dscale,
                         cudaStream_t s) {
  cross_entropy_kernel<<<rows, 512, 0, s>>>(logits, losses, targets, V, Vp, dscale);
  CUDA_CHECK(cudaGetLastError());
}

void mean_into(float* out, const float* in, int n, long long of, bool accumulate, cudaStream_t s) {
  mean_into_kernel<<<1, 1024, 0, s>>>(out, in, n, static_cast<float>(of), accumulate);
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

void advance_adam_step(int* step, float* bias_correction, float beta1, float beta2, cudaStream_t s) {
  advance_adam_step_kernel<<<1, 1, 0, s>>>(step, bias_correction, beta1, beta2);
  CUDA_CHECK(cudaGetLastError());
}

void adamw(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr, float beta1,
           float beta2, float eps, float weight_decay, const float* bias_correction, const float* norm_sq, float clip,
           cudaStream_t s) {
  if (aligned(master, 16) && aligned(m, 16) && aligned(v, 16) && aligned(param, 8) && aligned(grad, 8)) {
    const long long blocks = std::max<long long>(1, std::min<long long>((n / 4 + 255) / 256, 132LL * 8));
    adamw4_kernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(master, param, grad, m, v, n, lr, beta1, beta2, eps,
                                                                weight_decay, bias_correction, norm_sq, clip);
  } else {  // a ZeRO-1 shard's piece that starts mid-vector
    adamw_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                                                     bias_correction, norm_sq, clip);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
