#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads/gpt/bf16_gemm.hpp"
#include "workloads/gpt/fp8_linear.hpp"
#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/gpt_parallel.hpp"
#include "workloads/gpt/pipeline_schedule.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/gpu/cudnn_sdpa_graph.hpp"

// What the GPT-2 and the Llama training steps share: the one device allocation and its layout,
// the parameter, gradient and AdamW buffers, the tokens and the logits, the cuBLASLt GEMMs with
// their epilogues, cuDNN's fused attention, initialisation, the loss and the optimizer. A family's
// step (gpt2_step.cpp, llama_step.cpp) adds its activations and its forward and backward passes.
namespace scalebench::gpt {

// Hands out 256-byte aligned pieces of one allocation; with `at` null it only counts the bytes
// (what model_bytes() reports before anything is allocated).
struct Planner {
  std::byte* at = nullptr;
  std::size_t size = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t here = size;
    size += (bytes + 255) / 256 * 256;
    return here;
  }
  bf16* bf(long long n) {
    const std::size_t o = take(static_cast<std::size_t>(n) * 2);
    return at ? reinterpret_cast<bf16*>(at + o) : nullptr;
  }
  float* f32(long long n) {
    const std::size_t o = take(static_cast<std::size_t>(n) * 4);
    return at ? reinterpret_cast<float*>(at + o) : nullptr;
  }
};

class StepCore {
 public:
  StepCore(const ModelShape& shape, int b, int t, cudaStream_t stream, Attention att, const Parallel& par);
  virtual ~StepCore() = default;
  StepCore(const StepCore&) = delete;
  StepCore& operator=(const StepCore&) = delete;

  // Lays out every buffer (with `at` set, records the pointers); returns the bytes.
  std::size_t plan(std::byte* at);
  // Forward and backward of one micro-batch (see GptModel). On a pipeline stage: the blocks of
  // its chunk `stage` (use_chunk) only, on micro-batch `micro`'s activation slot of that chunk;
  // the first virtual stage starts from the embedding, the others from the input received into
  // pipe_buffer; the last ends with the head and the loss, the others' backward starts from the
  // gradient received into pipe_buffer.
  virtual void forward(int micro, int count) = 0;
  virtual void backward(int micro) = 0;
  // Pipeline parallelism: where micro-batch `micro`'s activation (the residual stream after chunk
  // `chunk`'s blocks; received: before them) or its gradient is sent from or received into;
  // pipe_elements() of them.
  virtual bf16* pipe_buffer(Carries what, bool send, int chunk, int micro) = 0;
  long long pipe_elements() const { return rows_l * m.width; }
  // All micro-batches' forward and backward passes of this stage: the 1F1B schedule
  // (one_f_one_b), or with virtual stages the interleaved one (interleaved_1f1b), its transfers
  // through par.pipe; with timing_pipe the time spent in them is measured (pipe_idle_ms).
  void run_pipeline(int count);
  // The chunk forward() and backward() run next: `stage` becomes its blocks.
  void use_chunk(int c) {
    chunk = c;
    stage = chunks[static_cast<std::size_t>(c)];
  }
  // Whether this rank holds the embeddings (in its first chunk) and the head (in its last).
  bool holds_embedding() const { return chunks.front().embedding; }
  bool holds_head() const { return chunks.back().head; }
  // Of the last step run with timing_pipe (synchronises): the stage's time waiting for the other
  // stages (inside the send/recv groups, the tied embedding's exchange and the gradient norm's sum
  // over the stages, transfers included) and the step's time from its first action to that sum.
  std::pair<double, double> pipe_idle_ms() const;
  // Waits for the gradient buckets, clips by the global norm (over the tp shards and, with ZeRO,
  // the dp shards), AdamW on this rank's parameters (ZeRO-1: its slices), then the all-gather.
  void optimizer_step(const Hyper& h);
  // Weights as GPT-2 initialises them (normal 0.02; residual projections 0.02 / sqrt(2 layers);
  // norms 1; biases 0), zero optimizer state and gradients. A tp rank takes its shard of the
  // values the whole tensor gets (copy_shard), so every tp gives the same model.
  void init(unsigned long long seed);
  // Tensor parallelism: the width of this rank's attention heads.
  int attn_width() const { return heads_l * m.head_dim(); }
  bool first_tp() const { return par.at.tp_rank == 0; }
  // Where a GEMM over all BT rows writes what becomes y (rows_l rows): the [BT, width] scratch
  // `partial` with sequence parallelism, y itself otherwise.
  bf16* full_rows(bf16* y) const { return sp ? partial : y; }
  // The residual or bias a row-parallel GEMM adds in its epilogue: tp rank 0's only, so that the
  // sum has it once; none with sequence parallelism (add_residual adds it to the row shards).
  const bf16* once(const bf16* x) const { return !sp && first_tp() ? x : nullptr; }
  // The tp ranks' partial sums of a [BT, width] GEMM output (in full_rows(y)) added up into y:
  // all-reduced in place, or with sequence parallelism reduce-scattered into y's row shard.
  void sum_partials(bf16* y);
  // Sequence parallelism: y (a row shard) += residual (+ bias), what once() left out; else nothing.
  void add_once(bf16* y, const bf16* residual, const bf16* bias);
  // A row shard [rows_l, width] as all BT rows: all-gathered into `gathered` with sequence
  // parallelism; the shard itself (already all rows) otherwise.
  const bf16* all_rows(const bf16* shard);
  // The profile's names of the tp collectives.
  const char* fwd_sum_mark() const { return sp ? "fwd.tp_reduce_scatter" : "fwd.tp_allreduce"; }
  const char* bwd_sum_mark() const { return sp ? "bwd.tp_reduce_scatter" : "bwd.tp_allreduce"; }
  // The backward pass tells the data-parallel reduction what is ready (on the last micro-batch);
  // with sequence parallelism the tp ranks first sum their row shards' parts of the replicated
  // tensors that block (-1: the embedding) completed.
  void layer_done(int layer, int micro);
  void backward_done(int micro);
  // cuDNN's fused attention for this shape: Q, K, V read in place from the QKV projection's rows
  // [B, T, heads + 2 kv_heads, head_dim], O written as rows [B, T, heads x head_dim].
  void plan_fused_attention();

  ModelShape m;
  int B, T;
  Attention attention;
  long long BT;
  cudaStream_t s;
  Parallel par;
  // This rank's pipeline chunks (rank_chunks: the whole model with pp 1, one stage under 1F1B),
  // the one forward() and backward() run (`stage`), and each chunk's activation slots: at most
  // pp - stage micro-batches are in flight under 1F1B, chunk_slots under the interleaved
  // schedule; micro-batch i uses slot i % slots.
  std::vector<StageBlocks> chunks;
  int chunk = 0;
  StageBlocks stage;
  std::vector<int> slots;
  // Block l's place among this rank's blocks, in the model's order (-1: not held), and their count:
  // where its tensors sit in the layout (stage_layout).
  std::vector<int> block_position;
  int held_blocks = 0;
  // Whether a block's activations can have been overwritten between its forward and its backward
  // (several slots or chunks).
  bool several_slots() const { return chunks.size() > 1 || slots.front() > 1; }
  // This tp rank's query heads, KV heads and MLP width (the whole model's with tp 1).
  int heads_l, kv_l, mlp_l;
  // Sequence parallelism (tp > 1): the embeddings, norms, residual stream, head and loss hold only
  // this rank's rows_l = BT / tp token rows, from row first_row (sequence_rows); else all BT.
  bool sp;
  long long rows_l = 0, first_row = 0;
  std::vector<std::vector<Range>> sp_sums;  // sequence_parallel_sums of the buffer
  BucketPlan buckets;
  std::vector<Tensor>& tensors;       // this rank's layout (buckets.tensors)
  std::vector<ShardPiece> pieces;     // ZeRO-1: this rank's slices; else empty
  std::vector<NormRange> norm_parts;  // what this rank adds to the gradient norm
  // pp > 1, GPT-2: the tied embedding in this stage's buffer (wte on the first stage, its copy on
  // the last; -1 elsewhere), whose gradient the two stages sum before the optimizer.
  long long tied_index = -1;
  std::unique_ptr<GradSync> sync;  // dp > 1
  long long n_params = 0;          // the (padded) flat buffer
  long long n_state = 0;           // fp32 master and moments this rank holds
  int micro_count = 1;
  // Activation recomputation: the blocks' inputs (the residual stream) are kept, every other
  // activation lives in one block's buffers, and the backward pass recomputes a block's forward
  // from its input before its gradients. Set before plan().
  bool recompute = false;
  // FP8 GEMMs (precision fp8, fp8_linear.hpp): the blocks' linear layers through `fp8`, four GEMM
  // sites a block (QKV, attention out, MLP up, MLP down), with delayed scaling. Set before plan().
  bool use_fp8 = false;
  DelayedScaling fp8_scaling;
  std::unique_ptr<Fp8Linear> fp8;
  gpu::DeviceBuffer mem;
  // A whole step captured once (GptModel::capture_step) and replayed; empty until then.
  gpu::GraphExec step_graph;

  // Flat parameter-sized buffers.
  bf16 *params = nullptr, *grads = nullptr;
  float *master = nullptr, *adam_m = nullptr, *adam_v = nullptr;
  // Data, logits (their gradient after the loss), losses.
  int *tokens = nullptr, *targets = nullptr;
  bf16* logits = nullptr;
  float *losses = nullptr, *loss_sum = nullptr, *norm_sq = nullptr;
  // Sequence parallelism's [BT, width] scratch: the all-gathered rows (a norm's output, the
  // residual stream's gradient) and a GEMM's partial sums before their reduce-scatter.
  bf16 *gathered = nullptr, *partial = nullptr;
  // AdamW's step count and bias corrections, on the device (advance_adam_step).
  int* adam_step = nullptr;
  float* bias_correction = nullptr;
  // Scratch: bias gradients when accumulating; the norm backward's per-block weight and bias sums.
  bf16* bias_scratch = nullptr;
  float* norm_partials = nullptr;
  // pp > 1: the other end's tied embedding gradient, received before the sum.
  bf16* tied_scratch = nullptr;
  // The pipeline's waits, measured in a step with timing_pipe (CUDA events on the stream).
  bool timing_pipe = false;
  gpu::Event pipe_start, pipe_end;
  std::vector<std::pair<gpu::Event, gpu::Event>> pipe_waits;
  std::size_t pipe_waits_used = 0;
  // Runs `f` (a transfer with other stages), between two events when timing_pipe.
  template <class F>
  void pipe_wait(F&& f) {
    if (!timing_pipe) return f();
    if (pipe_waits_used == pipe_waits.size()) pipe_waits.emplace_back();
    auto& w = pipe_waits[pipe_waits_used++];
    CUDA_CHECK(cudaEventRecord(w.first.get(), s));
    f();
    CUDA_CHECK(cudaEventRecord(w.second.get(), s));
  }
  void* workspace = nullptr;
  // Fused attention (Attention::kCudnn): its handle, plans and workspace.
  std::unique_ptr<gpu::CudnnHandle> cudnn;
  std::unique_ptr<gpu::SdpaForward> sdpa_fwd;
  std::unique_ptr<gpu::SdpaBackward> sdpa_bwd;
  gpu::DeviceBuffer sdpa_workspace;

  // Profile mode: an event after each group of kernels; the time since the previous one is
  // charged to the group's name.
  bool profiling = false;
  std::vector<std::pair<const char*, gpu::Event>> marks;
  void mark(const char* name);

  bf16* p(std::size_t i) const { return params + tensors[i].offset; }
  bf16* g(std::size_t i) const { return grads + tensors[i].offset; }

  void run(const Gemm& x) { gemms_.run(x, workspace, kWorkspaceBytes, s); }
  // y[BT, out] = x[BT, in] W^T (+ bias) (+ residual) ; W is [out, in].
  void linear(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, const bf16* residual = nullptr,
              cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT, bf16* aux = nullptr);
  // dW[out, in] (+)= dy^T x and, when `dbias`, the bias gradient (fused into the GEMM).
  void linear_weight_grad(bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, int in, int out, bool accumulate);
  // dx[BT, in] = dy[BT, out] W (optionally through GELU's derivative at `gelu_input`).
  void linear_input_grad(bf16* dx, const bf16* dy, const bf16* w, int in, int out, bf16* gelu_input = nullptr);
  // A block's linear layers, by GEMM site (fp8_site): FP8 with use_fp8, else linear(),
  // linear_weight_grad() and linear_input_grad() above. `gelu_out`: GPT-2's MLP up, y the GELU's
  // input kept for the backward pass and gelu_out its output; `gelu_input`: the input gradient
  // through GELU's derivative at it (MLP down).
  static int fp8_site(int layer, int gemm) { return 4 * layer + gemm; }
  // `gelu_site`: in FP8, the site that takes gelu_out as its x gets it in FP8 from the GEMM, and
  // gelu_out is not written (Fp8Linear::forward).
  void block_linear(int site, bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out,
                    const bf16* residual = nullptr, bf16* gelu_out = nullptr, int gelu_site = -1);
  void block_weight_grad(int site, bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, int in, int out,
                         bool accumulate);
  // With `gelu_input`, dx *= gelu'(gelu_input); in FP8, `gelu_site` (the up projection) takes the
  // product cast as it is made, and dx keeps the GEMM's output (Fp8Linear::input_grad).
  void block_input_grad(int site, bf16* dx, const bf16* dy, const bf16* w, int in, int out, bf16* gelu_input = nullptr,
                        int gelu_site = -1);
  // The output head on this rank's rows: logits [rows_l, Vp] = x W^T, and its gradients (dW
  // written or added, dx written).
  void head_forward(const bf16* x, const bf16* w);
  void head_backward(bf16* dx, bf16* dw, const bf16* x, const bf16* w, bool accumulate);
  // The logits' softmax cross-entropy (logits become their gradient) and the micro-batch's mean;
  // with sequence parallelism each rank's rows' share, summed over tp after the last micro-batch.
  void loss_forward(int micro, int count);
  // The logits' gradient alone (what loss_forward leaves in them, without adding to the loss), for
  // a backward pass whose logits another micro-batch's forward has overwritten since.
  void loss_gradient();

 protected:
  // The family's activations, after the shared buffers.
  virtual void plan_activations(Planner& p) = 0;
  // The shapes of the blocks' GEMM sites in fp8_site order (precision fp8).
  virtual std::vector<Fp8Shape> fp8_sites() const = 0;
  // Fills the family's constant tables once the buffers exist (init() calls it).
  virtual void init_tables() {}

 private:
  Bf16Gemms gemms_;
};

// The family's step for `m`.
std::unique_ptr<StepCore> make_gpt2_step(const ModelShape& m, int B, int T, cudaStream_t s, Attention attention,
                                         const Parallel& par);
std::unique_ptr<StepCore> make_llama_step(const ModelShape& m, int B, int T, cudaStream_t s, Attention attention,
                                          const Parallel& par);

}  // namespace scalebench::gpt
