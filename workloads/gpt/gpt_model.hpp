#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "workloads/gpt/fp8_scaling.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/gpt_parallel.hpp"

// A training step on one GPU, bf16, of a GPT-2 or a Llama-style model (by the shape's family):
// cuBLASLt GEMMs (bias, GELU, bias-gradient and residual fused into their epilogues), the workload's
// own kernels for the rest, AdamW on fp32 master weights with global-norm clipping. Every activation
// the backward pass needs is kept, or with recomputation only the blocks' inputs.
namespace scalebench::gpt {

class StepCore;

struct Hyper {
  float lr = 3e-4f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.1f, clip = 1.0f;
};

// How attention is computed: batched cuBLASLt GEMMs around the workload's own causal softmax
// (naive), or cuDNN's fused flash attention, forward and backward (cudnn).
enum class Attention { kNaive, kCudnn };
// "naive" or "cudnn"; throws Error naming the field otherwise.
Attention attention_from_name(const std::string& name);

// The blocks' GEMMs' number format: bf16, or FP8 (E4M3 forward, E5M2 gradients) with delayed
// scaling (fp8_linear.hpp). The head, attention, norms and optimizer stay as they are.
struct Precision {
  bool fp8 = false;
  DelayedScaling scaling;
};

// Bytes GptModel(m, B, T, ..., attention) allocates in its arena (what the out-of-memory message
// says it needs; cuDNN's attention workspace comes on top).
std::size_t model_bytes(const ModelShape& m, int B, int T, Attention attention = Attention::kNaive,
                        const Parallel& par = {}, bool recompute = false, const Precision& precision = {});

class GptModel {
 public:
  // Allocates parameters, optimizer state and activations for micro-batches of B x T tokens and
  // initialises the weights (both families) as GPT-2 does (normal 0.02; residual projections 0.02 / sqrt(2 layers);
  // norms 1 and 0; biases 0) from `seed`. Throws Error "out of memory: needs X GiB, has Y" when
  // the GPU's free memory is short. With Attention::kCudnn the fused attention's plans are built
  // here (Error naming the shape when cuDNN has no engine for it). `par`: this rank's place in a
  // pp x dp x tp layout (its tp shard of every weight, the same values on every tp; the dp reduction
  // of the gradients in buckets; ZeRO-1's optimizer slices; with sequence_parallel the norms,
  // residual stream, head and loss on its token rows only; with pp its stage's tensors, initialised
  // as the unsplit model's, and an activation slot per micro-batch in flight). `recompute`: keep only each block's
  // input and recompute the block's activations in its backward pass (less memory, about one more
  // forward pass of the blocks; the same loss and gradients). `precision`: bf16 or FP8 GEMMs.
  GptModel(const ModelShape& m, int B, int T, unsigned long long seed, cudaStream_t stream,
           Attention attention = Attention::kNaive, const Parallel& par = {}, bool recompute = false,
           const Precision& precision = {});
  ~GptModel();
  GptModel(const GptModel&) = delete;
  GptModel& operator=(const GptModel&) = delete;

  // The tokens of the next micro-batch: B x T inputs and targets (copied now).
  void set_tokens(const std::vector<int>& inputs, const std::vector<int>& targets);
  // Uniform random tokens below the vocabulary, targets = inputs shifted by one (on the GPU): rows
  // first_row .. first_row + B of the stream `seed` gives (a dp rank's slice of the whole batch).
  void synthetic_tokens(unsigned long long seed, long long first_row = 0);

  // Forward and backward of one micro-batch; `micro` counts from 0 within a step of `count`
  // micro-batches (gradients are written by micro-batch 0 and accumulated after). With dp > 1
  // the last micro-batch's backward sends the gradient buckets as it fills them. Not on a pipeline
  // stage (pp > 1): its micro-batches run in step()'s schedule (Error naming pp).
  void forward(int micro, int count);
  void backward(int micro);
  // Clip and AdamW; advances the step counter.
  void optimizer_step(const Hyper& h);
  // A whole step: grad_accum x (forward, backward), then the optimizer. Asynchronous. On a
  // pipeline stage (par.at.pp > 1, GPT-2): the stage's blocks under the 1F1B schedule over the
  // grad_accum micro-batches, activations and gradients through par.pipe; then the first and the
  // last stage sum the tied embedding's gradient, the stages sum the gradient norm's square, and
  // each stage's optimizer updates its own tensors. Every stage of a pipeline calls it.
  void step(int grad_accum, const Hyper& h);
  // CUDA graphs: capture_step records what step(grad_accum, h) enqueues (without running it; call
  // it after a step has run, so that every GEMM's algorithm is chosen) and replay_step launches
  // it: the same kernels on the same buffers and tokens, one launch. AdamW's step count lives on
  // the device, so replays train on; `h` stays as captured.
  void capture_step(int grad_accum, const Hyper& h);
  void replay_step();

  // The mean loss of the last step's micro-batches (synchronises). Only the stage with the head
  // has it (holds_loss(); Error naming pp on the others).
  float loss() const;
  bool holds_loss() const;

  // Pipeline parallelism: the stages (1 without), and the bubble of a step run after
  // time_pipeline(true) (synchronises): the time this stage waited for the others (in the sends
  // and receives, the tied embedding's exchange and the norm's sum over the stages, transfers
  // included) over the step's time from its first action to the end of that sum.
  int pipeline_stages() const;
  void time_pipeline(bool on);
  struct PipelineBubble {
    double idle_ms = 0, window_ms = 0;
    double fraction() const { return window_ms > 0 ? idle_ms / window_ms : 0.0; }
  };
  PipelineBubble pipeline_bubble() const;
  // The gradient's global norm before clipping, of the last optimizer step (synchronises).
  float grad_norm() const;

  // Of the last step (synchronises): data-parallel communication the backward pass did not hide,
  // plus ZeRO-1's all-gather (ms); 0 with dp 1.
  double exposed_communication_ms() const;

  // For checks: the flat parameter buffer (fp32 master and the bf16 values the step computes with,
  // as float), the bf16 gradients as float, and replacing the master weights (bf16 copy follows).
  std::vector<float> master() const;
  std::vector<float> params() const;
  std::vector<float> grads() const;
  void load_master(const std::vector<float>& values);

  // One step with an event after each group of kernels: milliseconds and share of the step per
  // group ("fwd.attention", "bwd.gemm_mlp", "opt.adamw", ...). The events add a little time.
  Json profile(int grad_accum, const Hyper& h);

  // This rank's tensors (its tp shards) and their offsets in the flat buffers (padded per bucket
  // with ZeRO-1); master() holds only this rank's slices with ZeRO-1.
  const std::vector<Tensor>& layout() const;
  // With FP8: the current scales of GEMM site `site` (4 a block: QKV, attention out, MLP up, MLP
  // down) for its input, weight and output gradient (synchronises); empty with bf16.
  std::vector<float> fp8_scales(int site) const;
  std::size_t device_bytes() const;           // everything this model allocated
  std::size_t optimizer_state_bytes() const;  // fp32 master weights and AdamW moments on this rank

 private:
  std::unique_ptr<StepCore> impl_;
};

}  // namespace scalebench::gpt
