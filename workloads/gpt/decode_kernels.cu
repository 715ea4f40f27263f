// The decoder's kernels: rows of (slot, position, token), the KV cache and attention over it, and
// the greedy choice.
#include "workloads/gpt/decode_kernels.cuh"
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

constexpr int kMaxCachedLen = 16384;  // the scores of one row live in shared memory
constexpr int kAttentionThreads = 128;

__global__ void decode_rows_kernel(int* row_slot, int* row_pos, int* row_token, const int* lengths, const int* next,
                                   int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  row_slot[i] = i;
  row_pos[i] = lengths[i];
  row_token[i] = next[i];
}

__global__ void embed_rows_kernel(bf16* x, const int* row_token, const int* row_pos, const bf16* wte, const bf16* wpe,
                                  int rows, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(rows) * C) return;
  const long long r = i / C, c = i % C;
  float v = __bfloat162float(wte[static_cast<long long>(row_token[r]) * C + c]);
  if (wpe) v += __bfloat162float(wpe[static_cast<long long>(row_pos[r]) * C + c]);
  x[i] = __float2bfloat16(v);
}

__global__ void write_kv_kernel(bf16* k_cache, bf16* v_cache, const bf16* qkv, const int* row_slot, const int* row_pos,
                                int rows, int q_width, int kv_width, int max_len) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(rows) * kv_width) return;
  const long long r = i / kv_width, c = i % kv_width;
  const bf16* row = qkv + r * (q_width + 2LL * kv_width);
  const long long at = (static_cast<long long>(row_slot[r]) * max_len + row_pos[r]) * kv_width + c;
  k_cache[at] = row[q_width + c];
  v_cache[at] = row[q_width + kv_width + c];
}

// One block per (row, query head). The scores of keys 0 .. pos in shared memory; then each thread
// sums the weighted values of one channel over a share of the keys, and the shares are added.
__global__ void cached_attention_kernel(bf16* y, const bf16* qkv, const bf16* k_cache, const bf16* v_cache,
                                        const int* row_slot, const int* row_pos, int heads, int kv_heads, int hd,
                                        int max_len, float scale) {
  extern __shared__ float smem[];
  float* q = smem;                // hd
  float* score = smem + hd;       // max_len
  float* part = score + max_len;  // blockDim.x
  const int r = blockIdx.x, h = blockIdx.y;
  const int q_width = heads * hd, kv_width = kv_heads * hd, kvh = h / (heads / kv_heads);
  const int n = row_pos[r] + 1;
  const bf16* qrow = qkv + static_cast<long long>(r) * (q_width + 2 * kv_width) + h * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) q[d] = __bfloat162float(qrow[d]) * scale;
  __syncthreads();
  const long long base = static_cast<long long>(row_slot[r]) * max_len * kv_width + kvh * hd;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const __nv_bfloat162* k =
        reinterpret_cast<const __nv_bfloat162*>(k_cache + base + static_cast<long long>(j) * kv_width);
    float dot = 0.f;
    for (int d = 0; d < hd / 2; ++d) {
      const float2 kk = __bfloat1622float2(k[d]);
      dot += q[2 * d] * kk.x + q[2 * d + 1] * kk.y;
    }
    score[j] = dot;
    mx = fmaxf(mx, dot);
  }
  mx = block_max(mx);
  float sum = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float e = __expf(score[j] - mx);
    score[j] = e;
    sum += e;
  }
  sum = block_sum(sum);  // its barriers also publish score[]
  // Thread t: channel t % hd over keys t / hd, t / hd + groups, ...
  const int groups = blockDim.x / hd > 0 ? blockDim.x / hd : 1;
  const int d = threadIdx.x % hd, g = threadIdx.x / hd;
  float acc = 0.f;
  if (g < groups)
    for (int j = g; j < n; j += groups)
      acc += score[j] * __bfloat162float(v_cache[base + static_cast<long long>(j) * kv_width + d]);
  part[threadIdx.x] = acc;
  __syncthreads();
  if (g == 0) {
    for (int k = 1; k < groups; ++k) acc += part[k * hd + d];
    y[static_cast<long long>(r) * q_width + h * hd + d] = __float2bfloat16(acc / sum);
  }
}

__global__ void gather_rows_kernel(bf16* out, const bf16* x, const int* index, int n, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(n) * C) return;
  const long long r = i / C, c = i % C;
  out[i] = x[static_cast<long long>(index[r]) * C + c];
}

// One block per logits row: the largest value and the lowest column holding it.
__global__ void greedy_rows_kernel(int* next, int* history, int* lengths, const bf16* logits, const int* source,
                                   const int* row_slot, const int* row_pos, int vocab, int vp, int max_len) {
  const int i = blockIdx.x;
  const bf16* row = logits + static_cast<long long>(i) * vp;
  float best = -INFINITY;
  int arg = vocab;
  for (int v = threadIdx.x; v < vocab; v += blockDim.x) {
    const float x = __bfloat162float(row[v]);
    if (x > best) best = x, arg = v;  // v rises: the first of equals stays
  }
  const float top = block_max(best);
  __shared__ int lowest;
  if (threadIdx.x == 0) lowest = vocab;
  __syncthreads();
  if (best == top) atomicMin(&lowest, arg);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const int r = source ? source[i] : i;
  const int slot = row_slot[r], pos = row_pos[r];
  next[slot] = lowest;
  if (pos + 1 < max_len) history[static_cast<long long>(slot) * max_len + pos + 1] = lowest;
  lengths[slot] = pos + 1;
}

}  // namespace

void decode_rows(int* row_slot, int* row_pos, int* row_token, const int* lengths, const int* next, int n,
                 cudaStream_t s) {
  decode_rows_kernel<<<grid_for(n, 128), 128, 0, s>>>(row_slot, row_pos, row_token, lengths, next, n);
  CUDA_CHECK(cudaGetLastError());
}

void embed_rows(bf16* x, const int* row_token, const int* row_pos, const bf16* wte, const bf16* wpe, int rows, int C,
                cudaStream_t s) {
  embed_rows_kernel<<<grid_for(static_cast<long long>(rows) * C, 256), 256, 0, s>>>(x, row_token, row_pos, wte, wpe,
                                                                                    rows, C);
  CUDA_CHECK(cudaGetLastError());
}

void write_kv(bf16* k_cache, bf16* v_cache, const bf16* qkv, const int* row_slot, const int* row_pos, int rows,
              int q_width, int kv_width, int max_len, cudaStream_t s) {
  write_kv_kernel<<<grid_for(static_cast<long long>(rows) * kv_width, 256), 256, 0, s>>>(
      k_cache, v_cache, qkv, row_slot, row_pos, rows, q_width, kv_width, max_len);
  CUDA_CHECK(cudaGetLastError());
}

void cached_attention(bf16* y, const bf16* qkv, const bf16* k_cache, const bf16* v_cache, const int* row_slot,
                      const int* row_pos, int rows, int heads, int kv_heads, int hd, int max_len, float scale,
                      cudaStream_t s) {
  if (max_len > kMaxCachedLen || hd % 2 != 0 || hd > kAttentionThreads || heads % kv_heads != 0)
    throw Error("cached attention: max_len " + std::to_string(max_len) + " (at most " + std::to_string(kMaxCachedLen) +
                "), head_dim " + std::to_string(hd) + " (even, at most " + std::to_string(kAttentionThreads) +
                "), heads " + std::to_string(heads) + " over kv_heads " + std::to_string(kv_heads));
  if (rows == 0) return;
  const std::size_t smem = sizeof(float) * (static_cast<std::size_t>(hd) + max_len + kAttentionThreads);
  static const bool raised = [] {
    CUDA_CHECK(cudaFuncSetAttribute(cached_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(sizeof(float) * (kMaxCachedLen + 2 * kAttentionThreads))));
    return true;
  }();
  (void)raised;
  cached_attention_kernel<<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(heads)), kAttentionThreads, smem,
                            s>>>(y, qkv, k_cache, v_cache, row_slot, row_pos, heads, kv_heads, hd, max_len, scale);
  CUDA_CHECK(cudaGetLastError());
}

void gather_rows(bf16* out, const bf16* x, const int* index, int n, int C, cudaStream_t s) {
  gather_rows_kernel<<<grid_for(static_cast<long long>(n) * C, 256), 256, 0, s>>>(out, x, index, n, C);
  CUDA_CHECK(cudaGetLastError());
}

void greedy_rows(int* next, int* history, int* lengths, const bf16* logits, const int* source, const int* row_slot,
                 const int* row_pos, int n, int vocab, int vp, int max_len, cudaStream_t s) {
  if (n == 0) return;
  greedy_rows_kernel<<<static_cast<unsigned>(n), 256, 0, s>>>(next, history, lengths, logits, source, row_slot, row_pos,
                                                              vocab, vp, max_len);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
