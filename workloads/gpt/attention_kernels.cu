// The naive attention path's pieces: head layouts and the causal softmax, forward and backward.
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

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
      online_softmax_add(__bfloat162float(v8[k]), mx, sum);
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

}  // namespace

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

}  // namespace scalebench::gpt
