// The decoder's kernels: rows of (slot, position, token), the KV cache and attention over it, and
// the greedy choice.
#include <algorithm>
#include <atomic>

#include "workloads/gpt/decode_kernels.cuh"
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

constexpr int kMaxCachedLen = 16384;  // the scores of one row live in shared memory
constexpr int kAttentionWarps = 8;
constexpr int kAttentionThreads = kAttentionWarps * 32;
constexpr int kMaxHeadDim = 128;
constexpr int kGreedyThreads = 1024;
constexpr int kKeysInFlight = 4;  // a lane's 16-byte loads of the cache issued before the first is used
// Attention's splits (attention_splits): at most kMaxSplits, and no more than the cache's capacity
// gives kMinKeysPerSplit keys each (a shorter row shares its keys over them all the same).
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

// One block per (row, query head, split of the keys), kAttentionWarps warps. A key's hd channels
// are read by L lanes, 8 channels (16 bytes) each, so a warp reads 32 / L keys at once and has
// kKeysInFlight such reads in flight: a decode step is bound by how many bytes of the cache are
// in flight, not by arithmetic. Scores are reduced over the L lanes of a key; the weighted values
// over the warp's keys, then across warps.
// kSplit (flash-decoding: a decode step of few rows has too few (row, head) blocks to keep the
// GPU's memory busy): each block keeps its maximum score, its sum of exponentials and its
// unnormalised output in `partial`, and the last block of a (row, head) to finish, counted in
// `done`, rescales and adds them up, and sets the count back to 0 for the next launch.
// With `own_key` (a decode step: each row the only new token of its sequence), the row's own key
// and value come from its qkv row, and the first block of the first query head of each KV head
// writes them to the cache: no block reads that position from the cache, so no write_kv launch is
// needed first.
template <int L, bool kSplit>
__global__ void __launch_bounds__(kAttentionThreads)
    cached_attention_kernel(bf16* y, const bf16* qkv, bf16* k_cache, bf16* v_cache, const int* row_slot,
                            const int* row_pos, int heads, int kv_heads, int hd, int max_len, float scale, bool own_key,
                            int chunk, float* partial, int* done) {
  constexpr int G = kWarp / L;  // keys a warp reads at once
  constexpr int U = kKeysInFlight;
  extern __shared__ float smem[];
  float* score = smem;         // chunk: at most a split's keys
  float* part = smem + chunk;  // warps x hd
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const int sub = lane % L, group = lane / L, c0 = 8 * sub;
  const bool has = c0 < hd;  // lanes past the head's channels read nothing
  const int r = blockIdx.x, h = blockIdx.y, split = kSplit ? blockIdx.z : 0;
  const int q_width = heads * hd, kv_width = kv_heads * hd, kvh = h / (heads / kv_heads);
  const int n = row_pos[r] + 1;
  // This block's keys: first .. end - 1 (split_share).
  const int stride = warps * G * U;  // keys the block reads in one pass
  const int share = kSplit ? split_share(n, gridDim.z, chunk, stride) : chunk;
  const int first = split * share, end = min(n, first + share);
  const bf16* row = qkv + static_cast<long long>(r) * (q_width + 2 * kv_width);
  float q[8] = {};
  if (has) {
    unpack8(*reinterpret_cast<const uint4*>(row + h * hd + c0), q);
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] *= scale;
  }
  const long long base = static_cast<long long>(row_slot[r]) * max_len * kv_width + kvh * hd;
  const bf16* own_k = row + q_width + kvh * hd;
  const bf16* own_v = own_k + kv_width;
  const int own = own_key ? n - 1 : -1;  // the key read from the row, not the cache
  if (own_key && split == 0 && h % (heads / kv_heads) == 0)
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      const long long at = base + static_cast<long long>(n - 1) * kv_width + d;
      k_cache[at] = own_k[d];
      v_cache[at] = own_v[d];
    }
  auto load = [&](const bf16* cache, const bf16* own_row, int j) {
    const bf16* from = j == own ? own_row + c0 : cache + base + static_cast<long long>(j) * kv_width + c0;
    return j < end && has ? *reinterpret_cast<const uint4*>(from) : uint4{0, 0, 0, 0};
  };
  // Warp w reads keys in runs of G x U from first + w G U, a stride of warps G U apart.
  float mx = -INFINITY;
  // The loop bounds are the warp's, not the lane's: every lane takes part in the shuffles.
  for (int b0 = first + warp * G * U; b0 < end; b0 += stride) {
    const int j0 = b0 + group;
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = load(k_cache, own_k, j0 + u * G);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float k[8];
      unpack8(raw[u], k);
      float dot = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i) dot = fmaf(q[i], k[i], dot);
#pragma unroll
      for (int o = L / 2; o > 0; o /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, o);
      const int j = j0 + u * G;
      if (j < end) {
        if (sub == 0) score[j - first] = dot;
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
  sum = block_sum(sum);  // its barriers also publish the exponentials
  float acc[8] = {};
  for (int b0 = first + warp * G * U; b0 < end; b0 += stride) {
    const int j0 = b0 + group;
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = load(v_cache, own_v, j0 + u * G);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * G;
      const float w = j < end ? score[j - first] : 0.f;
      float v[8];
      unpack8(raw[u], v);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] = fmaf(w, v[i], acc[i]);
    }
  }
  // The warp's keys summed: lanes holding the same channels are L apart.
#pragma unroll
  for (int o = L; o < kWarp; o *= 2)
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
  if (group == 0 && has)
#pragma unroll
    for (int i = 0; i < 8; ++i) part[warp * hd + c0 + i] = acc[i];
  __syncthreads();
  bf16* out = y + static_cast<long long>(r) * q_width + h * hd;
  if constexpr (!kSplit) {
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      float a = 0.f;
      for (int w = 0; w < warps; ++w) a += part[w * hd + d];
      out[d] = __float2bfloat16(a / sum);
    }
  } else {
    // This split's (max, sum, output[hd]) into partial, then the last split of (r, h) combines all.
    __shared__ bool last;
    const int splits = gridDim.z;
    const long long rh = static_cast<long long>(r) * heads + h;
    float* mine = partial + (rh * splits + split) * (hd + 2);
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      float a = 0.f;
      for (int w = 0; w < warps; ++w) a += part[w * hd + d];
      mine[2 + d] = a;
    }
    if (threadIdx.x == 0) mine[0] = mx, mine[1] = sum;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done + rh, 1) == splits - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    // The splits' maxima and sums read at once, split k by lane k of the first warp; each split's
    // weight exp(max - top) (0 for one without keys) in shared memory for every channel's sum.
    static_assert(kMaxSplits <= kWarp, "a lane per split");
    __shared__ float weight[kMaxSplits];
    __shared__ float total;
    const float* all = partial + rh * splits * (hd + 2);
    if (warp == 0) {
      const float m = lane < splits ? __ldcg(all + lane * (hd + 2)) : -INFINITY;
      const float z = lane < splits ? __ldcg(all + lane * (hd + 2) + 1) : 0.f;
      const float top = warp_max(m);
      const float w = m > -INFINITY ? __expf(m - top) : 0.f;
      const float t = warp_sum(z * w);
      if (lane < splits) weight[lane] = w;
      if (lane == 0) total = t;
    }
    __syncthreads();
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      float a = 0.f;
#pragma unroll 8
      for (int k = 0; k < splits; ++k) a = fmaf(__ldcg(all + k * (hd + 2) + 2 + d), weight[k], a);
      out[d] = __float2bfloat16(a / total);
    }
    if (threadIdx.x == 0) done[rh] = 0;
  }
}

// Launches attention with L lanes a key (hd / 8 rounded up to a power of two, at least 2).
template <int L, bool kSplit>
void launch_attention(dim3 grid, std::size_t smem, cudaStream_t s, bf16* y, const bf16* qkv, bf16* k_cache,
                      bf16* v_cache, const int* row_slot, const int* row_pos, int heads, int kv_heads, int hd,
                      int max_len, float scale, bool own_key, int chunk, float* partial, int* done) {
  // The shared-memory limit is raised once per device (the attribute is a device's): a bit each.
  static std::atomic<unsigned long long> raised{0};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const unsigned long long bit = 1ull << (device % 64);
  if ((raised.load() & bit) == 0) {
    CUDA_CHECK(cudaFuncSetAttribute(cached_attention_kernel<L, kSplit>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(sizeof(float) * (kMaxCachedLen + kAttentionWarps * kMaxHeadDim))));
    raised.fetch_or(bit);
  }
  cached_attention_kernel<L, kSplit><<<grid, kAttentionThreads, smem, s>>>(
      y, qkv, k_cache, v_cache, row_slot, row_pos, heads, kv_heads, hd, max_len, scale, own_key, chunk, partial, done);
}

template <bool kSplit, class... Args>
void launch_attention_for(int hd, Args... args) {
  if (hd <= 16)
    launch_attention<2, kSplit>(args...);
  else if (hd <= 32)
    launch_attention<4, kSplit>(args...);
  else if (hd <= 64)
    launch_attention<8, kSplit>(args...);
  else
    launch_attention<16, kSplit>(args...);
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
  if (max_len > kMaxCachedLen || hd % 8 != 0 || hd > kMaxHeadDim || heads % kv_heads != 0)
    throw Error("cached attention: max_len " + std::to_string(max_len) + " (at most " + std::to_string(kMaxCachedLen) +
                "), head_dim " + std::to_string(hd) + " (a multiple of 8, at most " + std::to_string(kMaxHeadDim) +
                "), heads " + std::to_string(heads) + " over kv_heads " + std::to_string(kv_heads));
  if (rows == 0) return;
  AttentionSplits a = attention_splits(rows, heads, max_len);
  if (scratch.partial == nullptr || scratch.done == nullptr) a = AttentionSplits{1, max_len};
  const std::size_t smem = sizeof(float) * (static_cast<std::size_t>(a.chunk) + kAttentionWarps * hd);
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(heads), static_cast<unsigned>(a.splits));
  if (a.splits > 1)
    launch_attention_for<true>(hd, grid, smem, s, y, qkv, k_cache, v_cache, row_slot, row_pos, heads, kv_heads, hd,
                               max_len, scale, own_key, a.chunk, scratch.partial, scratch.done);
  else
    launch_attention_for<false>(hd, grid, smem, s, y, qkv, k_cache, v_cache, row_slot, row_pos, heads, kv_heads, hd,
                                max_len, scale, own_key, a.chunk, scratch.partial, scratch.done);
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
