#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

// The gpt workload's models, parameter layout, FLOP formula and parallel partition plans. Pure: no
// CUDA, unit-tested everywhere.
namespace scalebench::gpt {

enum class Family { kGpt2, kLlama };

// One transformer's shape. GPT-2: learned positions, pre-LayerNorm, GELU (tanh), tied head, biases.
// Llama-style: RMSNorm, SwiGLU, rotary positions, grouped-query attention, untied head, no biases.
struct ModelShape {
  std::string name;
  Family family = Family::kGpt2;
  int layers = 0;
  int width = 0;
  int heads = 0;
  int kv_heads = 0;      // = heads unless grouped-query attention
  int mlp = 0;           // hidden width of the MLP (4 x width for GPT-2)
  int vocab = 0;         // the tokenizer's vocabulary
  int padded_vocab = 0;  // rows of the embedding and head (a multiple of 128)
  int max_seq = 0;       // the longest sequence the model is defined for
  int head_dim() const { return width / heads; }
  bool tied() const { return family == Family::kGpt2; }
};

// The models by name: gpt2-124m, gpt2-350m, gpt2-774m, gpt2-1558m (alias gpt2-1.5b), llama3-8b
// and the test models gpt2-tiny (2 layers, width 64, 4 heads, vocab 512) and llama-tiny (2 layers,
// width 64, 4 heads, 2 KV heads, MLP 172, vocab 512). `layers` > 0 overrides
// the model's layer count (8B-shaped layers that fit one GPU). Throws Error naming `model` and the
// known names, or `layers`.
ModelShape model_shape(const std::string& name, int layers = 0);
std::vector<std::string> model_names();

// What a tensor is, for initialisation, weight decay and the partition plans.
enum class TensorKind {
  kEmbedding,    // token embedding (GPT-2: also the output head)
  kPosition,     // learned position embedding
  kNormWeight,   // LayerNorm / RMSNorm scale (initialised to 1)
  kNormBias,     // LayerNorm shift (0)
  kQkv,          // fused query/key/value projection [ (heads + 2 kv_heads) x head_dim, width ]
  kQkvBias,      // its bias
  kAttnOut,      // attention output projection [width, width]
  kAttnOutBias,  // its bias
  kMlpUp,        // GPT-2 up projection / Llama up [mlp, width]
  kMlpUpBias,    // its bias
  kMlpGate,      // Llama gate [mlp, width]
  kMlpDown,      // down projection [width, mlp]
  kMlpDownBias,  // its bias
  kHead,         // untied output head [padded_vocab, width]
};

struct Tensor {
  std::string name;  // e.g. "h.3.qkv.weight"
  TensorKind kind;
  int layer = -1;                // -1 outside the blocks
  long long rows = 0, cols = 1;  // [out, in] for matrices (PyTorch's nn.Linear layout); [n, 1] for vectors
  long long offset = 0;          // elements from the start of the flat parameter buffer
  long long numel() const { return rows * cols; }
};

// Every parameter tensor in the order of the flat buffer: embeddings, then block by block, then
// the final norm (and the untied head). `seq`: rows of the GPT-2 position table.
std::vector<Tensor> parameter_layout(const ModelShape& m, int seq);

// `flat`, a buffer whose tensors lie where `held` says (a whole model's: GptModel's own order and
// padding), in `layout`'s order, tensor by name; a tensor the layout holds smaller (the position
// table of a shorter seq) takes the first of its values. Moved as it is when every tensor already lies
// where the layout puts it (one host copy of a large model, not two). Throws Error naming a tensor
// of the layout that `held` lacks.
std::vector<float> in_layout_order(std::vector<float> flat, const std::vector<Tensor>& held,
                                   const std::vector<Tensor>& layout);

// Parameters in total, without the position embedding, and those a token multiplies with: without
// the position embedding and, when the head is untied (Llama), without the input embedding, which
// is only a lookup table (GPT-2's tied embedding is the head's matrix and counts once).
long long parameter_count(const ModelShape& m, int seq);
long long parameter_count_without_positions(const ModelShape& m, int seq);
long long matmul_parameter_count(const ModelShape& m, int seq);

// Training FLOPs per token: 6 x matmul_parameter_count + 12 x layers x width x seq (attention scores
// and weighted values, forward and backward; with grouped-query attention the query heads span the
// width, so the term is the same). SwiGLU's three matrices and the smaller K/V projections are in
// the parameter count. The padded vocabulary counts.
double flops_per_token(const ModelShape& m, int seq);

// The dense bf16 Tensor Core peak MFU divides by: the data sheet's 989.4 TFLOP/s for H100 and H200
// (compute capability 9.0), 312 for A100 (8.0); 0 for other GPUs (the workload then takes the
// compute workload's table, workloads/compute/peak.hpp, at the GPU's clock).
double dense_bf16_peak(int cc_major, int cc_minor);

// Model FLOP utilisation in percent: tokens/s x FLOPs per token / peak.
double mfu_percent(double tokens_per_second, double flops_per_token, double peak);

// ---------- tensor parallelism (Megatron) ----------
enum class Split {
  kReplicated,  // every rank holds the whole tensor (norms, row-parallel biases, positions)
  kRows,        // rank r holds some rows: column-parallel weights (output features)
  kCols,        // rank r holds some columns: row-parallel weights (input features)
};
struct Range {
  long long begin = 0, end = 0;  // [begin, end)
  bool operator==(const Range&) const = default;
};
struct TensorShard {
  std::string tensor;
  Split split = Split::kReplicated;
  std::vector<Range> ranges;  // rows (kRows) or columns (kCols) this rank holds, in order; empty: all
  long long numel = 0;        // elements this rank holds
};
// Which part of each parameter tensor rank `rank` of `tp` holds. The fused QKV projection is split
// by head: rank r holds its heads' rows of Q, of K and of V (three ranges). The embeddings, the head
// and the norms are replicated. Throws Error naming `tp` when it does not divide the heads, the KV
// heads or the MLP width.
std::vector<TensorShard> tp_plan(const ModelShape& m, int seq, int tp, int rank);
void check_tp(const ModelShape& m, int tp);

// Sequence parallelism: outside the tensor-parallel regions (embeddings, norms, residual stream,
// head and loss) tp rank `tp_rank` holds the tp_rank-th of tp contiguous equal blocks of a
// micro-batch's `rows` (B x T) token rows. Throws Error naming sequence_parallel when tp does not
// divide the rows.
Range sequence_rows(long long rows, int tp, int tp_rank);

// ---------- ZeRO-1 ----------
// `elements` padded to a multiple of dp x `align`, so that dp equal slices (parallel_plan.hpp's
// zero_pieces) reduce-scatter and all-gather in whole aligned pieces.
long long zero_padded_size(long long elements, int dp, long long align = 64);

// ---------- the workload's parameters ----------
struct Config {
  std::string model = "gpt2-124m";
  int layers = 0;  // 0: the model's
  int seq = 1024;
  int micro_batch = 16;
  int grad_accum = 1;
  std::string precision = "bf16";  // or fp8: the blocks' GEMMs in FP8 with delayed scaling
  int fp8_history = 16;            // fp8: steps of amax each tensor's scale is chosen from
  int fp8_margin = 0;              // fp8: powers of two of headroom below the format's largest value
  bool fp8() const { return precision == "fp8"; }
  bool recompute = false;
  bool cuda_graph = false;         // timed steps replay one captured step (synthetic tokens only)
  int dp = 0, tp = 1, zero = 0;    // dp 0: the run's ranks / (tp x pp); tp 0: the ranks of one node
  int pp = 1;                      // pipeline stages (GPT-2, bf16): whole blocks, the 1F1B schedule
  int virtual_stages = 1;          // pp > 1: model chunks a rank, the interleaved schedule (1: 1F1B)
  bool sequence_parallel = false;  // tp > 1: activations outside the tp regions split by token rows
  bool overlap = true;             // data-parallel buckets sent during the backward pass
  double bucket_mb = 25;           // gradient bucket size (MB)
  int steps = 5;                   // steps per timed sample
  float lr = 3e-4f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.1f, clip = 1.0f;
  std::string attention = "cudnn";  // cudnn: cuDNN's fused SDPA; naive: batched GEMMs + our causal softmax
  bool check = true;
  unsigned long long seed = 1234;
  // Real text (docs/gpt.md, "Training on text"): empty for the synthetic token stream; else
  // "fortunes" or a file or folder of UTF-8 text, byte-level tokens (the vocabulary becomes 256).
  std::string data;
  int train_steps = 200;  // with data: optimizer steps from the initial weights
  int eval_every = 50;    // with data: steps between held-out evaluations (0: at the end only)
  int eval_batches = 16;  // with data: micro-batches per dp rank per evaluation, at most
  int lr_warmup = 0;      // with data: steps over which the learning rate rises linearly to lr
  std::string save;       // with data: where the trained weights go (checkpoint.hpp); empty: nowhere
  bool text() const { return !data.empty(); }
  // The model's shape; with data its vocabulary is the byte-level tokenizer's 256.
  ModelShape shape() const;
  // From the params (model, layers, seq, micro_batch, grad_accum, precision, fp8_history, fp8_margin, recompute,
  // cuda_graph, dp, tp, pp, virtual_stages, zero, sequence_parallel, overlap, bucket_mb, steps, lr, weight_decay, clip,
  // attention, check, seed, data, train_steps, eval_every, eval_batches, lr_warmup); throws Error naming the field. pp
  // > 1 is built for GPT-2 in bf16 with dp, tp and recompute: with Llama, zero 1, fp8, cuda_graph or data it is an
  // Error naming pp and the other field. virtual_stages > 1 needs pp > 1, at least a block a virtual stage and
  // grad_accum a multiple of pp (Errors naming virtual_stages, and grad_accum).
  static Config from_params(const Json& params);
  // dp and tp for a run of `ranks` ranks, `ranks_per_node` on each node: 0s filled in (tp 0: one
  // node's ranks; dp 0: ranks / (tp x pp)); throws Error naming `dp` when dp x tp x pp is not the
  // ranks, or `tp` when it does not divide the ranks or the model's heads, or `sequence_parallel`
  // when tp resolves to 1 or does not divide micro_batch x seq, or `pp` when tp x pp does not divide the ranks.
  Config resolved(int ranks, int ranks_per_node) const;
  Json to_json() const;
};

}  // namespace scalebench::gpt
