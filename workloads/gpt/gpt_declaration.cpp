// The gpt workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include <exception>
#include <string>

#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"
#include "workloads/gpt/gpt_config.hpp"

namespace scalebench {
namespace {

// Every check gpt::Config makes (model, seq against the model, tp against the heads, ...); its
// messages name the field.
std::string check_gpt(const Json& params) {
  try {
    gpt::Config::from_params(params);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

WorkloadDef gpt_declaration() {
  WorkloadDef d;
  d.name = "gpt";
  d.help =
      "GPT-2 (124M to 1.5B) or Llama-style (Llama 3 8B-shaped layers) training, bf16 (or fp8 GEMMs), synthetic tokens "
      "or real text "
      "(`data`), on one GPU "
      "or data/ZeRO-1/tensor/pipeline parallel (dp x tp x pp ranks): cuBLASLt GEMMs with fused epilogues, cuDNN flash "
      "attention, the "
      "workload's own kernels, AdamW on "
      "fp32 master weights; tokens/s, MFU, step split (docs/gpt.md)";
  d.params = {
      {"model",
       ParamType::kEnum,
       "gpt2-124m",
       {"gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1558m", "gpt2-1.5b", "gpt2-tiny", "llama3-8b", "llama-tiny"},
       {},
       "the network: GPT-2 sizes; llama3-8b (RMSNorm, SwiGLU, rotary, 8 KV heads, untied head; with `layers` "
       "to fit one GPU); gpt2-tiny and llama-tiny (2 layers, width 64) for checks"},
      {"layers", ParamType::kInt, 0, {}, 0, "blocks: 0 the model's, else that many of its shape (llama3-8b: 4 fit)"},
      {"seq", ParamType::kInt, 1024, {}, 1, "tokens per sequence (at most the model's: 1024 GPT-2, 8192 Llama)"},
      {"micro_batch", ParamType::kInt, 16, {}, 1, "sequences per micro-batch"},
      {"grad_accum", ParamType::kInt, 1, {}, 1, "micro-batches per optimizer step"},
      {"precision",
       ParamType::kEnum,
       "bf16",
       {"bf16", "fp8"},
       {},
       "bf16: bf16 weights, activations and GEMMs; fp8: the blocks' GEMMs (QKV, attention out, MLP) in FP8, E4M3 "
       "forward and E5M2 gradients with delayed scaling; width, MLP width and micro_batch x seq multiples of 16; fp32 "
       "master weights either way"},
      {"fp8_history",
       ParamType::kInt,
       16,
       {},
       1,
       "with fp8: steps of amax history each tensor's scale is chosen from (the largest of the window)"},
      {"fp8_margin",
       ParamType::kInt,
       0,
       {},
       0,
       "with fp8: powers of two of headroom: scale = format max / amax / 2^margin",
       30},
      {"recompute",
       ParamType::kBool,
       false,
       {},
       {},
       "activation recomputation: keep only each block's input, recompute its activations in the backward pass "
       "(less memory, about a third more compute)"},
      {"cuda_graph",
       ParamType::kBool,
       false,
       {},
       {},
       "capture one whole training step (every micro-batch and the optimizer) as a CUDA graph after the warm-up "
       "and time its replays: one launch a step instead of one per kernel; synthetic tokens only"},
      {"dp",
       ParamType::kInt,
       0,
       {},
       0,
       "data-parallel ranks: each its own tokens, gradients averaged by NCCL in buckets; dp x tp x pp = the ranks; "
       "0: the ranks / (tp x pp)"},
      {"tp",
       ParamType::kInt,
       1,
       {},
       0,
       "tensor-parallel ranks (consecutive ranks of one node): attention heads and MLP split Megatron-style, "
       "activations all-reduced; must divide the heads, the KV heads and the MLP width; 0: all ranks of a node"},
      {"pp",
       ParamType::kInt,
       1,
       {},
       1,
       "pipeline stages (GPT-2, bf16): whole blocks a stage, the embedding on the first and the head on the last "
       "(the tied embedding's gradient summed between them), the 1F1B schedule over the step's grad_accum "
       "micro-batches (interleaved with virtual_stages > 1), activations and their gradients by NCCL send/recv; dp x "
       "tp x pp = the ranks, stages "
       "outermost, tp inside a stage; records the measured bubble and the schedule's (pp-1)/(grad_accum+pp-1); "
       "with zero 1, fp8, cuda_graph, data or Llama an error"},
      {"virtual_stages",
       ParamType::kInt,
       1,
       {},
       1,
       "pp > 1: model chunks per pipeline rank, the interleaved 1F1B schedule (Megatron's): chunk c of rank r is "
       "virtual stage c x pp + r of the pp x virtual_stages split (cost-balanced as pp's), activations from rank "
       "pp-1 wrap to rank 0's next chunk; grad_accum must be a multiple of pp; a smaller bubble, theory "
       "(pp-1)/(virtual_stages x grad_accum+pp-1) of the step, for more transfers and activation memory; 1: 1F1B"},
      {"zero",
       ParamType::kInt,
       0,
       {},
       0,
       "ZeRO stage: 0 (every dp rank holds all optimizer state) or 1 (gradients reduce-scattered, AdamW on this "
       "rank's shard of each bucket, parameters all-gathered)",
       1},
      {"sequence_parallel",
       ParamType::kBool,
       false,
       {},
       {},
       "with tp > 1, Megatron sequence parallelism: embeddings, norms, residual stream, head and loss on each tp "
       "rank's 1/tp of the token rows (all-gather and reduce-scatter instead of all-reduce; less activation memory); "
       "tp must divide micro_batch x seq; with tp 1 an error"},
      {"overlap",
       ParamType::kBool,
       true,
       {},
       {},
       "true: send each gradient bucket as soon as the backward pass fills it; false: all after the backward"},
      {"bucket_mb", ParamType::kNumber, 25, {}, 0, "gradient bucket size in MB (whole blocks per bucket)"},
      {"steps", ParamType::kInt, 5, {}, 1, "steps per timed sample"},
      timing::warmup(3, "untimed steps before timing"),
      {"lr", ParamType::kNumber, 3e-4, {}, 0, "AdamW learning rate"},
      {"weight_decay", ParamType::kNumber, 0.1, {}, 0, "AdamW decoupled weight decay"},
      {"clip", ParamType::kNumber, 1.0, {}, 0, "global gradient-norm clip (0: off)"},
      {"attention",
       ParamType::kEnum,
       "cudnn",
       {"cudnn", "naive"},
       {},
       "cudnn: cuDNN's fused flash attention; naive: batched GEMMs and our causal softmax (GPT-2 only)"},
      timing::check("the fixed batch's loss must fall and stay finite"),
      {"seed", ParamType::kInt, 1234, {}, 0, "initial weights' seed (and the data's order with `data`)"},
      {"data",
       ParamType::kText,
       "",
       {},
       {},
       "empty: synthetic tokens (throughput); else train on real text: fortunes (the Debian package fortunes) or a "
       "file or folder of UTF-8 text, byte-level tokens (vocabulary 256), the last 5% held out, each dp rank its "
       "own shard; records the loss curve (docs/gpt.md)"},
      {"train_steps", ParamType::kInt, 200, {}, 1, "with data: optimizer steps from the initial weights"},
      {"save",
       ParamType::kText,
       "",
       {},
       {},
       "with data: write the trained weights to this file, a checkpoint the infer workload's text generation "
       "loads (-p checkpoint=FILE, docs/infer.md); needs tp 1, pp 1, zero 0"},
      {"eval_every",
       ParamType::kInt,
       50,
       {},
       0,
       "with data: steps between evaluations of the held-out loss (0: at the end only)"},
      {"eval_batches", ParamType::kInt, 16, {}, 1, "with data: held-out micro-batches per dp rank per evaluation"},
      {"lr_warmup",
       ParamType::kInt,
       0,
       {},
       0,
       "with data: steps over which the learning rate rises linearly from 0 to lr (0: lr from the first step)"},
  };
  d.needs_gpus = true;
  d.check = &check_gpt;
  d.measurement_params = {"warmup", "steps", "check", "eval_every", "eval_batches"};
  d.table_columns = {"model", "micro_batch", "seq", "grad_accum", "dp", "tp", "pp", "zero"};
  return d;
}

}  // namespace scalebench
