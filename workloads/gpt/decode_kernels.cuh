#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "workloads/gpt/gpt_kernels.cuh"

// The decoder's own kernels (gpt_decoder.hpp). A forward pass of the decoder runs over "rows":
// tokens of several sequences at once, each row naming its sequence's slot in the KV cache, its
// position and its token. A decode step has a row per sequence; a prefill a row per prompt token.
// The KV cache of one layer is K and V each [slots, max_len, kv_width] bf16.
namespace scalebench::gpt {

// The rows of a decode step: row i is slot b = slots[i] (i without a list), at position
// lengths[b] (the tokens its cache holds), with the token chosen last (next[b]).
void decode_rows(int* row_slot, int* row_pos, int* row_token, const int* lengths, const int* next, const int* slots,
                 int n, cudaStream_t s);

// x[r, :] = wte[row_token[r], :] + wpe[row_pos[r], :] (wpe may be null: no learned positions).
void embed_rows(bf16* x, const int* row_token, const int* row_pos, const bf16* wte, const bf16* wpe, int rows, int C,
                cudaStream_t s);

// Each row's K and V (columns q_width .. q_width + 2 kv_width of its qkv row) into the cache at its
// slot and position.
void write_kv(bf16* k_cache, bf16* v_cache, const bf16* qkv, const int* row_slot, const int* row_pos, int rows,
              int q_width, int kv_width, int max_len, cudaStream_t s);

// Attention over fewer (row, head) pairs than kAttentionSplitBelow (two blocks per SM of an
// H100/H200) splits each one's keys over `splits` blocks of at most `chunk` keys (the cache's
// capacity's share). Its scratch: each split's partial result, and a count per (row, head) of the
// splits done, zero before a launch (each launch leaves it zero).
constexpr int kAttentionSplitBelow = 2 * 132;
struct AttentionSplits {
  int splits = 1, chunk = 0;
};
// The keys each split of a row of n keys takes: an even share, but no fewer than `stride` (what a
// block reads in one pass of its warps) where the chunk allows. Each pass is a round trip to
// memory, and each busy split more work for the combine: a decode is latency, not bandwidth.
__host__ __device__ inline int split_share(int n, int splits, int chunk, int stride) {
  const int even = (n + splits - 1) / splits;
  return even > stride ? (even < chunk ? even : chunk) : (stride < chunk ? stride : chunk);
}
struct AttentionScratch {
  float* partial = nullptr;  // attention_scratch_floats(hd)
  int* done = nullptr;       // kAttentionSplitBelow counts, zeroed once
};
AttentionSplits attention_splits(int rows, int heads, int max_len);
std::size_t attention_scratch_floats(int hd);

// Causal attention of each row's queries over its slot's cache up to and including its position:
// y[r, h x hd ..] = softmax(q_h K^T x scale) V, query head h reading KV head h / (heads / kv_heads).
// fp32 inside; max_len at most 16384. With `own_key`, each row's key and value at its position are
// taken from its qkv row and written to the cache here (write_kv not needed): only for rows that
// are each the one new token of their sequence, as in a decode step. Without scratch, one split.
void cached_attention(bf16* y, const bf16* qkv, bf16* k_cache, bf16* v_cache, const int* row_slot, const int* row_pos,
                      int rows, int heads, int kv_heads, int hd, int max_len, float scale, bool own_key,
                      const AttentionScratch& scratch, cudaStream_t s);

// out[i, :] = x[index[i], :]: the rows whose logits are wanted (each prompt's last).
void gather_rows(bf16* out, const bf16* x, const int* index, int n, int C, cudaStream_t s);

// The greedy token of each of n logits rows (the first `vocab` of vp columns; the lowest on a tie)
// for the sequence of row `source[i]` (row_slot / row_pos index it): next[slot] = token,
// history[slot, pos + 1] = token (when pos + 1 < max_len) and lengths[slot] = pos + 1.
void greedy_rows(int* next, int* history, int* lengths, const bf16* logits, const int* source, const int* row_slot,
                 const int* row_pos, int n, int vocab, int vp, int max_len, cudaStream_t s);

}  // namespace scalebench::gpt
