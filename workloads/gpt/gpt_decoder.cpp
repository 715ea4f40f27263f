#include "workloads/gpt/gpt_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "common/error.hpp"
#include "workloads/gpt/bf16_gemm.hpp"
#include "workloads/gpt/decode_kernels.cuh"
#include "workloads/gpt/llama_kernels.cuh"
#include "workloads/gpt/row_linear.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/graph_capture.hpp"

// Why the decoder is shaped this way:
// - A forward pass runs over rows (slot, position, token), so that a prefill of every prompt and a
//   decode step of every sequence are the same passes over different rows; the rows of a decode
//   step are made on the device from the sequences' lengths and last tokens, so a step is a
//   fixed set of launches that a CUDA graph replays.
// - Attention reads each sequence's cache directly (a block per row and head, or several splitting
//   its keys when the pass has few rows): a decode row has one query, where a fused training
//   kernel would waste its tiles.
// - Linear layers go through RowLinear (row_linear.hpp): a kernel of its own for the few rows of a
//   decode step, cuBLASLt for more.
// - Only the rows that choose a token go through the head: every row of a decode step, the last
//   of each prompt in a prefill.
namespace scalebench::gpt {

namespace {
// Parameter tensors of a block (parameter_layout's order). GPT-2: ln1 w, b; qkv w, b; proj w, b;
// ln2 w, b; fc w, b; fc-proj w, b. Llama: ln1, qkv, proj, ln2, gate, up, down.
constexpr int kGpt2BlockTensors = 12;
constexpr int kLlamaBlockTensors = 7;

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
}  // namespace

// The buffers' sizes, in one place for the allocation and decoder_bytes(). Per row: the residual
// stream, the norm's output and attention's output (width each), QKV (query, key and value heads),
// the MLP's first GEMM (GPT-2: its hidden width; Llama: gate and up, twice it) and, for Llama,
// SwiGLU's output.
struct DecoderSizes {
  long long params = 0, cache = 0, rows = 0, slots = 0, seq = 0;
  long long C = 0, Vp = 0, qkv = 0, mlp_in = 0, hidden = 0, rope = 0;
  std::size_t attention_floats = 0;  // split attention's partial results
  DecoderSizes(const ModelShape& m, int slots_, int seq_, int prefill_tokens) {
    const std::vector<Tensor> t = parameter_layout(m, seq_);
    const bool llama = m.family == Family::kLlama;
    params = t.back().offset + t.back().numel();
    C = m.width;
    Vp = m.padded_vocab;
    slots = slots_;
    seq = seq_;
    qkv = static_cast<long long>(m.heads + 2 * m.kv_heads) * m.head_dim();
    mlp_in = llama ? 2LL * m.mlp : m.mlp;
    hidden = llama ? m.mlp : 0;
    rope = llama ? seq_ * (m.head_dim() / 2) : 0;  // float2 each
    attention_floats = attention_scratch_floats(m.head_dim());
    cache = static_cast<long long>(m.layers) * slots_ * seq_ * m.kv_heads * m.head_dim();  // K, and as much for V
    rows = std::max<long long>(slots_, prefill_tokens > 0 ? prefill_tokens : static_cast<long long>(slots_) * seq_);
  }
  std::size_t total() const {
    const std::size_t b = 2, i = 4;
    return round_up(b * params) + 2 * round_up(b * cache) + 3 * round_up(i * rows) + 2 * round_up(i * slots) +
           round_up(b * rows * C) * 3 + round_up(b * rows * qkv) + round_up(b * rows * mlp_in) +
           round_up(b * rows * hidden) + round_up(8 * rope) + 2 * round_up(4 * rows) + 2 * round_up(b * slots * C) +
           round_up(b * slots * Vp) + 2 * round_up(i * slots) + round_up(i * slots * seq) + kWorkspaceBytes +
           round_up(4 * attention_floats) + round_up(i * kAttentionSplitBelow);
  }
};

class DecoderState {
 public:
  DecoderState(const ModelShape& shape, int slots, int seq, cudaStream_t stream, int prefill_tokens)
      : m(shape),
        S(slots),
        T(seq),
        s(stream),
        sizes(shape, slots, seq, prefill_tokens),
        layout(parameter_layout(m, T)) {
    if (T < 2 || T > m.max_seq)
      throw Error("decode: seq " + std::to_string(T) + " must be 2 to the model's " + std::to_string(m.max_seq));
    if (S < 1) throw Error("decode: slots must be at least 1");
    if (m.head_dim() % 8 != 0 || m.head_dim() > 128 || (llama() && m.head_dim() % 16 != 0))
      throw Error("decode: head width " + std::to_string(m.head_dim()) +
                  "; the attention kernel takes multiples of 8 to 128 (rotary: multiples of 16)");
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // Beside the buffers: fp32 staging of one tensor (init, load) and room for cuBLASLt's own.
    long long largest = 0;
    for (const Tensor& t : layout) largest = std::max(largest, t.numel());
    const std::size_t needs =
        sizes.total() + sizeof(float) * static_cast<std::size_t>(largest) + (std::size_t{256} << 20);
    if (needs > free_b) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "out of memory: needs %.1f GiB, has %.1f GiB", needs / 1073741824.0,
                    free_b / 1073741824.0);
      throw Error(msg);
    }
    const long long C = m.width, R = sizes.rows;
    params = alloc<bf16>(sizes.params);
    k_cache = alloc<bf16>(sizes.cache);
    v_cache = alloc<bf16>(sizes.cache);
    row_slot = alloc<int>(R);
    row_pos = alloc<int>(R);
    row_token = alloc<int>(R);
    last_row = alloc<int>(S);
    decode_slots = alloc<int>(S);
    x = alloc<bf16>(R * C);
    ln = alloc<bf16>(R * C);
    atty = alloc<bf16>(R * C);
    qkv = alloc<bf16>(R * sizes.qkv);
    fc = alloc<bf16>(R * sizes.mlp_in);
    hidden = alloc<bf16>(R * sizes.hidden);
    rope = alloc<float2>(sizes.rope);
    mean = alloc<float>(R);
    rstd = alloc<float>(R);
    head_x = alloc<bf16>(static_cast<long long>(S) * C);
    head_ln = alloc<bf16>(static_cast<long long>(S) * C);
    logits = alloc<bf16>(static_cast<long long>(S) * m.padded_vocab);
    lengths = alloc<int>(S);
    next = alloc<int>(S);
    history = alloc<int>(static_cast<long long>(S) * T);
    workspace = alloc<std::byte>(kWorkspaceBytes);
    attention.partial = alloc<float>(static_cast<long long>(sizes.attention_floats));
    attention.done = alloc<int>(kAttentionSplitBelow);
    CUDA_CHECK(cudaMemsetAsync(attention.done, 0, sizeof(int) * kAttentionSplitBelow, s));
    host_lengths.assign(static_cast<std::size_t>(S), 0);
    // No sequence in any slot: lengths 0 (what check_room and iterate go by on the host too).
    for (int* zero : {lengths, next, history})
      CUDA_CHECK(cudaMemsetAsync(zero, 0, sizeof(int) * static_cast<std::size_t>(zero == history ? S * T : S), s));
    if (llama()) rotary_table(rope, T, m.head_dim(), kRopeTheta, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  const ModelShape m;
  const int S, T;
  cudaStream_t s;
  DecoderSizes sizes;
  std::vector<Tensor> layout;
  std::vector<gpu::DeviceBuffer> buffers;
  bf16 *params, *k_cache, *v_cache, *x, *ln, *atty, *qkv, *fc, *hidden, *head_x, *head_ln, *logits;
  float2* rope;  // Llama: (cos, sin) of each position's angles
  int *row_slot, *row_pos, *row_token, *last_row, *decode_slots, *lengths, *next, *history;
  float *mean, *rstd;
  std::byte* workspace;
  AttentionScratch attention;
  RowLinear linears;
  gpu::GraphExec step_graph;
  std::vector<int> host_lengths;  // what lengths will hold once the stream has run
  int last_rows = 0;              // logits rows of the last pass
  // Profile mode: an event after each group of kernels (profile_step()).
  bool profiling = false;
  std::vector<std::pair<const char*, gpu::Event>> marks;
  void mark(const char* name) {
    if (!profiling) return;
    marks.emplace_back(name, gpu::Event());
    CUDA_CHECK(cudaEventRecord(marks.back().second.get(), s));
  }

  template <class V>
  V* alloc(long long n) {
    buffers.emplace_back(round_up(sizeof(V) * static_cast<std::size_t>(n)));
    return reinterpret_cast<V*>(buffers.back().get());
  }
  bf16* p(std::size_t tensor) const { return params + layout[tensor].offset; }
  bool llama() const { return m.family == Family::kLlama; }
  // Tensor i of block l, and the final norm's first tensor (the head follows Llama's).
  std::size_t block(int l, int i) const {
    return llama() ? 1 + static_cast<std::size_t>(l) * kLlamaBlockTensors + i
                   : 2 + static_cast<std::size_t>(l) * kGpt2BlockTensors + i;
  }
  std::size_t final_norm() const { return block(m.layers, 0); }

  // A block's linear layer over n rows: weight tensor w and, for GPT-2, its bias (the tensor after
  // it; Llama has none).
  void linear(bf16* y, const bf16* in_rows, std::size_t w, int in, int out, int n, bool add = false,
              bool gelu = false) {
    linears.run(y, in_rows, p(w), llama() ? nullptr : p(w + 1), in, out, n, sizes.rows, add, gelu, workspace, s);
  }

  // The norm before each block's attention (0) and MLP (1), and the final one (tensor t):
  // LayerNorm (GPT-2) or RMSNorm (Llama).
  void norm(bf16* out, const bf16* in, std::size_t t, int n) {
    if (llama())
      rmsnorm_forward(out, rstd, in, p(t), n, m.width, s);
    else
      layernorm_forward(out, mean, rstd, in, p(t), p(t + 1), n, m.width, s);
  }

  // The model over n rows; the head and the greedy choice over the `choosing` rows last_row names
  // (gathered) or, with none named, every row. `decode_only`: every row is the one new token of its
  // sequence (attention then writes the cache itself).
  void forward(int n, int choosing, bool decode_only) {
    const int C = m.width, NH = m.heads, KV = m.kv_heads, hd = m.head_dim(), F = m.mlp;
    const int q_width = NH * hd, kv_width = KV * hd;
    const float scale = 1.f / std::sqrt(static_cast<float>(hd));
    embed_rows(x, row_token, row_pos, p(0), llama() ? nullptr : p(1), n, C, s);
    mark("embedding");
    for (int l = 0; l < m.layers; ++l) {
      const long long at = static_cast<long long>(l) * S * T * kv_width;
      norm(ln, x, block(l, 0), n);
      mark("norm");
      linear(qkv, ln, block(l, llama() ? 1 : 2), C, static_cast<int>(sizes.qkv), n);
      mark("gemm_qkv");
      if (llama()) {
        rotary(qkv, rope, n, T, NH + KV, hd, static_cast<int>(sizes.qkv), false, s, row_pos);
        mark("rotary");
      }
      if (!decode_only) {
        write_kv(k_cache + at, v_cache + at, qkv, row_slot, row_pos, n, q_width, kv_width, T, s);
        mark("kv_write");
      }
      cached_attention(atty, qkv, k_cache + at, v_cache + at, row_slot, row_pos, n, NH, KV, hd, T, scale, decode_only,
                       attention, s);
      mark("attention");
      linear(x, atty, block(l, llama() ? 2 : 4), q_width, C, n, true);
      mark("gemm_proj");
      norm(ln, x, block(l, llama() ? 3 : 6), n);
      mark("norm");
      if (llama()) {
        // Gate and up lie one after the other in the parameter buffer: one GEMM makes both.
        linear(fc, ln, block(l, 4), C, 2 * F, n);
        mark("gemm_mlp_up");
        swiglu_forward(hidden, fc, n, F, s);
        mark("swiglu");
        linear(x, hidden, block(l, 6), F, C, n, true);
      } else {
        linear(fc, ln, block(l, 8), C, F, n, false, true);
        mark("gemm_mlp_up");
        linear(x, fc, block(l, 10), F, C, n, true);
      }
      mark("gemm_mlp_down");
    }
    const bool gathered = choosing > 0;
    const bf16* head_in = x;
    int rows = n;
    if (gathered) {
      gather_rows(head_x, x, last_row, choosing, C, s);
      head_in = head_x;
      rows = choosing;
    }
    norm(head_ln, head_in, final_norm(), rows);
    mark("norm");
    const bf16* head = p(llama() ? final_norm() + 1 : 0);  // GPT-2's head is its token embedding
    linears.run(logits, head_ln, head, nullptr, C, m.padded_vocab, rows, S, false, false, workspace, s);
    mark("gemm_head");
    greedy_rows(next, history, lengths, logits, gathered ? last_row : nullptr, row_slot, row_pos, rows, m.vocab,
                m.padded_vocab, T, s);
    mark("greedy");
    last_rows = rows;
  }

  void decode_step() {
    mark("start");
    decode_rows(row_slot, row_pos, row_token, lengths, next, nullptr, S, s);
    mark("decode_rows");
    forward(S, 0, true);
  }

  // Why a slot cannot take part in an iteration; "" when it can.
  std::string refused(int slot, std::vector<char>& seen) const {
    if (slot < 0 || slot >= S) return "slot " + std::to_string(slot) + " of " + std::to_string(S);
    if (seen[static_cast<std::size_t>(slot)]++) return "slot " + std::to_string(slot) + " twice in one iteration";
    return "";
  }

  // One iteration of continuous batching (GptDecoder::iterate): decode rows first, made on the
  // device from the sequences' lengths and last tokens, then the admitted prompts' tokens.
  void iterate(const std::vector<SlotPrompt>& admit, const std::vector<int>& decode) {
    std::vector<char> seen(static_cast<std::size_t>(S), 0);
    long long rows = static_cast<long long>(decode.size());
    for (const int b : decode) {
      if (std::string why = refused(b, seen); !why.empty()) throw Error("decode: " + why);
      const int held = host_lengths[static_cast<std::size_t>(b)];
      if (held < 1) throw Error("decode: slot " + std::to_string(b) + " holds no sequence to continue");
      if (held >= T)
        throw Error("decode: slot " + std::to_string(b) + " holds " + std::to_string(T) +
                    " tokens, the most its seq takes");
    }
    for (const SlotPrompt& a : admit) {
      if (std::string why = refused(a.slot, seen); !why.empty()) throw Error("decode: " + why);
      const std::size_t n = a.tokens.size();
      if (n == 0 || static_cast<int>(n) >= T)
        throw Error("decode: slot " + std::to_string(a.slot) + "'s prompt has " + std::to_string(n) + " tokens; 1 to " +
                    std::to_string(T - 1) + " fit");
      for (std::size_t i = 0; i < n; ++i)
        if (a.tokens[i] < 0 || a.tokens[i] >= m.vocab)
          throw Error("decode: slot " + std::to_string(a.slot) + "'s token " + std::to_string(i) + " is " +
                      std::to_string(a.tokens[i]) + ", outside the vocabulary of " + std::to_string(m.vocab));
      rows += static_cast<long long>(n);
    }
    if (rows == 0) throw Error("decode: an iteration with nothing to admit or decode");
    if (rows > sizes.rows)
      throw Error("decode: an iteration of " + std::to_string(rows) + " token rows; the decoder takes " +
                  std::to_string(sizes.rows) + " at once");
    const int d = static_cast<int>(decode.size());
    std::vector<int> slot, pos, token, last;
    for (int i = 0; i < d; ++i) last.push_back(i);
    for (const SlotPrompt& a : admit) {
      for (std::size_t i = 0; i < a.tokens.size(); ++i) {
        slot.push_back(a.slot);
        pos.push_back(static_cast<int>(i));
        token.push_back(a.tokens[i]);
      }
      last.push_back(d + static_cast<int>(token.size()) - 1);
    }
    auto upload = [&](int* to, const std::vector<int>& from) {
      if (!from.empty())
        CUDA_CHECK(cudaMemcpyAsync(to, from.data(), sizeof(int) * from.size(), cudaMemcpyHostToDevice, s));
    };
    if (d > 0) {
      upload(decode_slots, decode);
      decode_rows(row_slot, row_pos, row_token, lengths, next, decode_slots, d, s);
    }
    upload(row_slot + d, slot);
    upload(row_pos + d, pos);
    upload(row_token + d, token);
    upload(last_row, last);
    for (const SlotPrompt& a : admit) upload(history + static_cast<long long>(a.slot) * T, a.tokens);
    forward(static_cast<int>(rows), static_cast<int>(last.size()), admit.empty());
    CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors above are freed on return
    for (const int b : decode) ++host_lengths[static_cast<std::size_t>(b)];
    for (const SlotPrompt& a : admit)
      host_lengths[static_cast<std::size_t>(a.slot)] = static_cast<int>(a.tokens.size());
  }

  // A step of every slot: each must hold a sequence with room for one more token.
  void check_room() {
    for (int b = 0; b < S; ++b)
      if (host_lengths[static_cast<std::size_t>(b)] < 1)
        throw Error("decode: slot " + std::to_string(b) + " holds no sequence; a step decodes every slot");
      else if (host_lengths[static_cast<std::size_t>(b)] >= T)
        throw Error("decode: slot " + std::to_string(b) + " holds " + std::to_string(T) +
                    " tokens, the most its seq takes");
  }
  void advance() {
    for (int& n : host_lengths) ++n;
  }
};

GptDecoder::GptDecoder(const ModelShape& m, int slots, int seq, cudaStream_t stream, int prefill_tokens)
    : state_(std::make_unique<DecoderState>(m, slots, seq, stream, prefill_tokens)) {}

GptDecoder::~GptDecoder() = default;

void GptDecoder::load(const std::vector<float>& params) {
  DecoderState& d = *state_;
  if (params.size() != static_cast<std::size_t>(d.sizes.params))
    throw Error("decode: " + std::to_string(params.size()) + " parameter values, the layout of " + d.m.name +
                " at seq " + std::to_string(d.T) + " has " + std::to_string(d.sizes.params));
  // A tensor at a time through fp32 staging of the largest (the constructor left room for it).
  long long largest = 0;
  for (const Tensor& t : d.layout) largest = std::max(largest, t.numel());
  gpu::DeviceBuffer staging(sizeof(float) * static_cast<std::size_t>(largest));
  for (std::size_t j = 0; j < d.layout.size(); ++j) {
    const Tensor& t = d.layout[j];
    CUDA_CHECK(cudaMemcpyAsync(staging.get(), params.data() + t.offset,
                               sizeof(float) * static_cast<std::size_t>(t.numel()), cudaMemcpyHostToDevice, d.s));
    to_bf16(d.p(j), reinterpret_cast<const float*>(staging.get()), t.numel(), d.s);
  }
  CUDA_CHECK(cudaStreamSynchronize(d.s));
}

// As StepCore::init (init_tensor), a tensor at a time through fp32 scratch of the largest.
void GptDecoder::init(unsigned long long seed) {
  DecoderState& d = *state_;
  long long largest = 0;
  for (const Tensor& t : d.layout) largest = std::max(largest, t.numel());
  gpu::DeviceBuffer master(sizeof(float) * static_cast<std::size_t>(largest));
  float* mp = reinterpret_cast<float*>(master.get());
  for (std::size_t j = 0; j < d.layout.size(); ++j) init_tensor(mp, d.p(j), d.layout[j], j, d.m.layers, seed, d.s);
  CUDA_CHECK(cudaStreamSynchronize(d.s));
}

void GptDecoder::prefill(const std::vector<std::vector<int>>& prompts) {
  DecoderState& d = *state_;
  if (prompts.size() != static_cast<std::size_t>(d.S))
    throw Error("decode: " + std::to_string(prompts.size()) + " prompts for " + std::to_string(d.S) + " slots");
  std::vector<SlotPrompt> admit;
  for (int b = 0; b < d.S; ++b) admit.push_back({b, prompts[static_cast<std::size_t>(b)]});
  d.iterate(admit, {});
}

void GptDecoder::iterate(const std::vector<SlotPrompt>& admit, const std::vector<int>& decode) {
  state_->iterate(admit, decode);
}

void GptDecoder::step() {
  state_->check_room();
  state_->decode_step();
  state_->advance();
}

void GptDecoder::step_graphed() {
  DecoderState& d = *state_;
  d.check_room();
  if (!d.step_graph.get()) d.step_graph = gpu::capture_graph(d.s, [&] { d.decode_step(); });
  CUDA_CHECK(cudaGraphLaunch(d.step_graph.get(), d.s));
  d.last_rows = d.S;
  d.advance();
}

Json GptDecoder::profile_step() {
  DecoderState& d = *state_;
  d.check_room();
  d.marks.clear();
  d.profiling = true;
  try {
    d.decode_step();
  } catch (...) {
    d.profiling = false;
    throw;
  }
  d.profiling = false;
  d.advance();
  CUDA_CHECK(cudaStreamSynchronize(d.s));
  std::map<std::string, double> ms;
  for (std::size_t i = 1; i < d.marks.size(); ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, d.marks[i - 1].second.get(), d.marks[i].second.get()));
    ms[d.marks[i].first] += t;
  }
  Json out = Json::object();
  for (const auto& [name, t] : ms) out[name] = t;
  return out;
}

void GptDecoder::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(state_->s)); }

std::vector<std::vector<int>> GptDecoder::sequences() const {
  const DecoderState& d = *state_;
  std::vector<int> history(static_cast<std::size_t>(d.S) * d.T);
  CUDA_CHECK(cudaMemcpyAsync(history.data(), d.history, sizeof(int) * history.size(), cudaMemcpyDeviceToHost, d.s));
  CUDA_CHECK(cudaStreamSynchronize(d.s));
  std::vector<std::vector<int>> out;
  for (int b = 0; b < d.S; ++b) {
    const auto first = history.begin() + static_cast<long long>(b) * d.T;
    out.emplace_back(first, first + std::min(d.host_lengths[static_cast<std::size_t>(b)] + 1, d.T));
  }
  return out;
}

std::vector<std::vector<float>> GptDecoder::last_logits() const {
  const DecoderState& d = *state_;
  std::vector<bf16> raw(static_cast<std::size_t>(d.last_rows) * d.m.padded_vocab);
  CUDA_CHECK(cudaMemcpyAsync(raw.data(), d.logits, sizeof(bf16) * raw.size(), cudaMemcpyDeviceToHost, d.s));
  CUDA_CHECK(cudaStreamSynchronize(d.s));
  std::vector<std::vector<float>> out(static_cast<std::size_t>(d.last_rows));
  for (int r = 0; r < d.last_rows; ++r)
    for (int v = 0; v < d.m.vocab; ++v)
      out[static_cast<std::size_t>(r)].push_back(
          __bfloat162float(raw[static_cast<std::size_t>(r) * d.m.padded_vocab + static_cast<std::size_t>(v)]));
  return out;
}

int GptDecoder::slots() const { return state_->S; }
int GptDecoder::seq() const { return state_->T; }
std::size_t GptDecoder::device_bytes() const {
  std::size_t n = 0;
  for (const auto& b : state_->buffers) n += b.bytes();
  return n;
}

std::size_t decoder_bytes(const ModelShape& m, int slots, int seq, int prefill_tokens) {
  return DecoderSizes(m, slots, seq, prefill_tokens).total();
}

}  // namespace scalebench::gpt
