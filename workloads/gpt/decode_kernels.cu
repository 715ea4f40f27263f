// The decoder's kernels: rows of (slot, position, token), the KV cache and attention over it, and
// the greedy choice.
#include <algorithm>

#include "workloads/gpt/decode_kernels.cuh"
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

constexpr int kMaxCachedLen = 16384;  // the scores of one row live in shared memory
constexpr int kAttentionWarps = 8;
constexpr int kAttentionThreads = kAttentionWarps * 32;
constexpr int kMaxHeadDim = 128;
constexpr int kGreedyThreads = 1024;
// Attention's splits (attention_splits): at most kMaxSplits, each at least kMinKeysPerSplit keys.
constexpr int kMaxSplits = 32;
constexpr int kMinKeysPerSplit = 16;

__global__ void decode_rows_kernel(int* row_slot, int* row_pos, int* row_token, const int* lengths, const int* next,
                                   const int* slots, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int b = slots ? slots[i] : i;
  row_slot[i] = b;
  row_pos[i] = lengths[b];
  row_token[i] = next[b];
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

// One block per (row, query head, split of the keys), kAttentionWarps warps. Warp w takes keys w,
// w + warps, ... of its split: each lane holds two channels of the query (four when hd > 64), so a
// key's row is one coalesced read and a warp sum; four keys are in flight at once, since a decode
// row's few blocks are bound by the latency of these reads. The weighted values are summed the
// same way, then across warps.
// With several splits (flash-decoding: a decode step of few rows has too few (row, head) blocks to
// keep the GPU's memory busy), each block keeps its maximum score, its sum of exponentials and its
// unnormalised output in `partial`, and the last block of a (row, head) to finish, counted in
// `done`, rescales and adds them up, and sets the count back to 0 for the next launch.
// With `own_key` (a decode step: each row the only new token of its sequence), the row's own key
// and value come from its qkv row, and the first block of the first query head of each KV head
// writes them to the cache: no block reads that position from the cache, so no write_kv launch is
// needed first.
__global__ void __launch_bounds__(kAttentionThreads)
    cached_attention_kernel(bf16* y, const bf16* qkv, bf16* k_cache, bf16* v_cache, const int* row_slot,
                            const int* row_pos, int heads, int kv_heads, int hd, int max_len, float scale, bool own_key,
                            int chunk, float* partial, int* done) {
  extern __shared__ float smem[];
  float* score = smem;         // chunk
  float* part = smem + chunk;  // warps x hd
  __shared__ bool last;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const int r = blockIdx.x, h = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int q_width = heads * hd, kv_width = kv_heads * hd, kvh = h / (heads / kv_heads);
  const int n = row_pos[r] + 1, pairs = hd / 2;
  const int first = split * chunk, end = min(n, first + chunk);  // this block's keys: first .. end - 1
  const bool two = lane + kWarp < pairs;                         // a second pair of channels (hd > 64)
  const bool one = lane < pairs;
  const __nv_bfloat162* qrow =
      reinterpret_cast<const __nv_bfloat162*>(qkv + static_cast<long long>(r) * (q_width + 2 * kv_width) + h * hd);
  float2 q0 = one ? __bfloat1622float2(qrow[lane]) : float2{0.f, 0.f};
  float2 q1 = two ? __bfloat1622float2(qrow[lane + kWarp]) : float2{0.f, 0.f};
  q0.x *= scale, q0.y *= scale, q1.x *= scale, q1.y *= scale;
  const long long base = static_cast<long long>(row_slot[r]) * max_len * kv_width + kvh * hd;
  const bf16* own_k = qkv + static_cast<long long>(r) * (q_width + 2 * kv_width) + q_width + kvh * hd;
  const bf16* own_v = own_k + kv_width;
  const int own = own_key ? n - 1 : -1;  // the key read from the row, not the cache
  if (own_key && split == 0 && h % (heads / kv_heads) == 0)
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      const long long at = base + static_cast<long long>(n - 1) * kv_width + d;
      k_cache[at] = own_k[d];
      v_cache[at] = own_v[d];
    }
  auto pair_at = [&](const bf16* cache, int j, int p) {
    const bf16* key =
        j == own ? (cache == k_cache ? own_k : own_v) : cache + base + static_cast<long long>(j) * kv_width;
    return __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(key)[p]);
  };
  constexpr int kInFlight = 4;
  float mx = -INFINITY;
  for (int j0 = first + warp; j0 < end; j0 += kInFlight * warps) {
    float2 k0[kInFlight], k1[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int j = j0 + u * warps;
      k0[u] = j < end && one ? pair_at(k_cache, j, lane) : float2{0.f, 0.f};
      k1[u] = j < end && two ? pair_at(k_cache, j, lane + kWarp) : float2{0.f, 0.f};
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int j = j0 + u * warps;
      const float dot = warp_sum(q0.x * k0[u].x + q0.y * k0[u].y + q1.x * k1[u].x + q1.y * k1[u].y);
      if (j < end) {
        if (lane == 0) score[j - first] = dot;
        mx = fmaxf(mx, dot);
      }
    }
  }
  mx = block_max(mx);  // its barriers also publish score[]
  float sum = 0.f;
  for (int j = first + threadIdx.x; j < end; j += blockDim.x) {
    const float e = __expf(score[j - first] - mx);
    score[j - first] = e;
    sum += e;
  }
  sum = block_sum(sum);
  float2 a0{0.f, 0.f}, a1{0.f, 0.f};
  for (int j0 = first + warp; j0 < end; j0 += kInFlight * warps) {
    float2 v0[kInFlight], v1[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int j = j0 + u * warps;
      v0[u] = j < end && one ? pair_at(v_cache, j, lane) : float2{0.f, 0.f};
      v1[u] = j < end && two ? pair_at(v_cache, j, lane + kWarp) : float2{0.f, 0.f};
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int j = j0 + u * warps;
      const float w = j < end ? score[j - first] : 0.f;
      a0.x += w * v0[u].x, a0.y += w * v0[u].y, a1.x += w * v1[u].x, a1.y += w * v1[u].y;
    }
  }
  if (one) part[warp * hd + 2 * lane] = a0.x, part[warp * hd + 2 * lane + 1] = a0.y;
  if (two) part[warp * hd + 2 * (lane + kWarp)] = a1.x, part[warp * hd + 2 * (lane + kWarp) + 1] = a1.y;
  __syncthreads();
  bf16* out = y + static_cast<long long>(r) * q_width + h * hd;
  if (splits == 1) {
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      float acc = 0.f;
      for (int w = 0; w < warps; ++w) acc += part[w * hd + d];
      out[d] = __float2bfloat16(acc / sum);
    }
    return;
  }
  // This split's (max, sum, output[hd]) into partial, then the last split of (r, h) combines all.
  const long long rh = static_cast<long long>(r) * heads + h;
  float* mine = partial + (rh * splits + split) * (hd + 2);
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.f;
    for (int w = 0; w < warps; ++w) acc += part[w * hd + d];
    mine[2 + d] = acc;
  }
  if (threadIdx.x == 0) mine[0] = mx, mine[1] = sum;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done + rh, 1) == splits - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  const float* all = partial + rh * splits * (hd + 2);
  float top = -INFINITY;
  for (int k = 0; k < splits; ++k) top = fmaxf(top, __ldcg(all + k * (hd + 2)));
  float total = 0.f;
  for (int k = 0; k < splits; ++k) {
    const float m = __ldcg(all + k * (hd + 2));
    if (m > -INFINITY) total += __ldcg(all + k * (hd + 2) + 1) * __expf(m - top);
  }
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.f;
    for (int k = 0; k < splits; ++k) {
      const float m = __ldcg(all + k * (hd + 2));
      if (m > -INFINITY) acc += __ldcg(all + k * (hd + 2) + 2 + d) * __expf(m - top);
    }
    out[d] = __float2bfloat16(acc / total);
  }
  if (threadIdx.x == 0) done[rh] = 0;
}

__global__ void gather_rows_kernel(bf16* out, const bf16* x, const int* index, int n, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(n) * C) return;
  const long long r = i / C, c = i % C;
  out[i] = x[static_cast<long long>(index[r]) * C + c];
}

// One block per logits row: the largest value and the lowest column holding it. Four values a
// load (a row starts 16-byte aligned: vp is a multiple of 128), since a decode step of one
// sequence has this one block to read 50k values with.
__global__ void __launch_bounds__(kGreedyThreads)
    greedy_rows_kernel(int* next, int* history, int* lengths, const bf16* logits, const int* source,
                       const int* row_slot, const int* row_pos, int vocab, int vp, int max_len) {
  const int i = blockIdx.x;
  const bf16* row = logits + static_cast<long long>(i) * vp;
  float best = -INFINITY;
  int arg = vocab;
  for (int v0 = 4 * threadIdx.x; v0 < vocab; v0 += 4 * blockDim.x) {
    const uint2 raw = *reinterpret_cast<const uint2*>(row + v0);
    const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
    const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
    const float x[4] = {a.x, a.y, b.x, b.y};
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (v0 + u < vocab && x[u] > best) best = x[u], arg = v0 + u;  // columns rise: the first of equals stays
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

void decode_rows(int* row_slot, int* row_pos, int* row_token, const int* lengths, const int* next, const int* slots,
                 int n, cudaStream_t s) {
  if (n == 0) return;
  decode_rows_kernel<<<grid_for(n, 128), 128, 0, s>>>(row_slot, row_pos, row_token, lengths, next, slots, n);
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

AttentionSplits attention_splits(int rows, int heads, int max_len) {
  AttentionSplits a{1, max_len};
  const long long blocks = static_cast<long long>(rows) * heads;
  if (blocks >= kAttentionSplitBelow) return a;  // enough (row, head) blocks: one split each
  const long long want = (kAttentionSplitBelow + blocks - 1) / blocks;
  const long long most = (max_len + kMinKeysPerSplit - 1) / kMinKeysPerSplit;
  a.splits = static_cast<int>(std::max(1LL, std::min({want, most, static_cast<long long>(kMaxSplits)})));
  a.chunk = (max_len + a.splits - 1) / a.splits;
  return a;
}

std::size_t attention_scratch_floats(int hd) {
  return static_cast<std::size_t>(kAttentionSplitBelow) * kMaxSplits * static_cast<std::size_t>(hd + 2);
}

void cached_attention(bf16* y, const bf16* qkv, bf16* k_cache, bf16* v_cache, const int* row_slot, const int* row_pos,
                      int rows, int heads, int kv_heads, int hd, int max_len, float scale, bool own_key,
                      const AttentionScratch& scratch, cudaStream_t s) {
  if (max_len > kMaxCachedLen || hd % 2 != 0 || hd > kMaxHeadDim || heads % kv_heads != 0)
    throw Error("cached attention: max_len " + std::to_string(max_len) + " (at most " + std::to_string(kMaxCachedLen) +
                "), head_dim " + std::to_string(hd) + " (even, at most " + std::to_string(kMaxHeadDim) + "), heads " +
                std::to_string(heads) + " over kv_heads " + std::to_string(kv_heads));
  if (rows == 0) return;
  AttentionSplits a = attention_splits(rows, heads, max_len);
  if (scratch.partial == nullptr || scratch.done == nullptr) a = AttentionSplits{1, max_len};
  const std::size_t smem = sizeof(float) * (static_cast<std::size_t>(a.chunk) + kAttentionWarps * hd);
  static const bool raised = [] {
    CUDA_CHECK(cudaFuncSetAttribute(cached_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(sizeof(float) * (kMaxCachedLen + kAttentionWarps * kMaxHeadDim))));
    return true;
  }();
  (void)raised;
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(heads), static_cast<unsigned>(a.splits));
  cached_attention_kernel<<<grid, kAttentionThreads, smem, s>>>(y, qkv, k_cache, v_cache, row_slot, row_pos, heads,
                                                                kv_heads, hd, max_len, scale, own_key, a.chunk,
                                                                scratch.partial, scratch.done);
  CUDA_CHECK(cudaGetLastError());
}

void gather_rows(bf16* out, const bf16* x, const int* index, int n, int C, cudaStream_t s) {
  gather_rows_kernel<<<grid_for(static_cast<long long>(n) * C, 256), 256, 0, s>>>(out, x, index, n, C);
  CUDA_CHECK(cudaGetLastError());
}

void greedy_rows(int* next, int* history, int* lengths, const bf16* logits, const int* source, const int* row_slot,
                 const int* row_pos, int n, int vocab, int vp, int max_len, cudaStream_t s) {
  if (n == 0) return;
  greedy_rows_kernel<<<static_cast<unsigned>(n), kGreedyThreads, 0, s>>>(next, history, lengths, logits, source,
                                                                         row_slot, row_pos, vocab, vp, max_len);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
