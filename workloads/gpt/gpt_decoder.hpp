#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpt/gpt_config.hpp"

// Greedy text generation with a KV cache: a prompt per sequence is run once (prefill), and then
// every decode step runs one token of every sequence through the model, its keys and values
// appended to the cache, and appends the most likely next token. Both families of the gpt
// workload (GPT-2; Llama-style with RMSNorm, rotary positions, grouped-query attention and SwiGLU),
// bf16, the workload's own kernels and cuBLASLt's GEMMs as in training (gpt_model.hpp); the weights
// are the training model's (its parameter layout, so a trained model's values load as they are).
namespace scalebench::gpt {

class DecoderState;

// A prompt for one slot of the decoder.
struct SlotPrompt {
  int slot = 0;
  std::vector<int> tokens;
};

class GptDecoder {
 public:
  // Room for `slots` sequences of at most `seq` tokens each (prompt and generated; also the rows of
  // the position table, as in the training model of that seq) and prompts of `prefill_tokens`
  // tokens in all at once (0: slots x seq). Throws Error for a model whose head is wider than the
  // attention kernel takes, and "out of memory: needs X GiB" when the GPU is short.
  GptDecoder(const ModelShape& m, int slots, int seq, cudaStream_t stream, int prefill_tokens = 0);
  ~GptDecoder();
  GptDecoder(const GptDecoder&) = delete;
  GptDecoder& operator=(const GptDecoder&) = delete;

  // The weights: parameter_layout(m, seq)'s values (as GptModel::params() gives them), or the
  // values GptModel(m, ., seq, seed) initialises.
  void load(const std::vector<float>& params);
  void init(unsigned long long seed);

  // Starts every slot afresh from its prompt (one per slot, 1 to seq - 1 tokens, each below the
  // vocabulary): one forward pass over all their tokens, which fills the cache and chooses each
  // sequence's next token. Error naming the slot for a prompt that does not fit.
  void prefill(const std::vector<std::vector<int>>& prompts);
  // One iteration of continuous batching, in one forward pass: each admitted slot starts afresh
  // from its prompt (its first token chosen) and each slot in `decode` gives one more token. A
  // slot takes part once at most; Error naming the slot otherwise, for a decode slot that holds
  // no sequence or no room, or for a prompt as prefill() refuses it, and for an iteration with
  // nothing in it; nothing runs then.
  // Synchronises.
  void iterate(const std::vector<SlotPrompt>& admit, const std::vector<int>& decode);
  // One token of every sequence: the token chosen last goes through the model at the next
  // position and the next one is chosen. Asynchronous; Error when a slot holds no sequence or a
  // sequence would pass seq.
  void step();
  // The same step as one CUDA graph launch (captured on first use).
  void step_graphed();
  // Waits until everything enqueued so far has run.
  void synchronize() const;
  // One step launched kernel by kernel with an event after each group of kernels: milliseconds
  // per group ("attention", "gemm_qkv", "greedy", ...; synchronises). The events add a little time.
  Json profile_step();

  // Each sequence so far: its prompt and the tokens chosen (synchronises).
  std::vector<std::vector<int>> sequences() const;
  // The logits the last pass chose from, the first m.vocab columns (synchronises): what a check
  // compares with a reference. One row per sequence that chose a token: every slot in order
  // after prefill() and a step; after iterate(), its decode slots in the order given, then its
  // admitted slots in theirs.
  std::vector<std::vector<float>> last_logits() const;

  int slots() const;
  int seq() const;
  std::size_t device_bytes() const;

 private:
  std::unique_ptr<DecoderState> state_;
};

// Bytes a GptDecoder(m, slots, seq, ., prefill_tokens) allocates: weights, KV cache, activations.
std::size_t decoder_bytes(const ModelShape& m, int slots, int seq, int prefill_tokens = 0);

}  // namespace scalebench::gpt
