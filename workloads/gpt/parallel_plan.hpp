#pragma once
#include <string>
#include <vector>

#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/pipeline_schedule.hpp"

// How one rank of a pp x dp x tp layout holds the model: its pipeline stage's tensors, its
// tensor-parallel shard's parameter layout,
// the gradient buckets the data-parallel reduction sends as the backward pass fills them, the
// ZeRO-1 pieces of each bucket this rank updates, and the ranges the gradient norm sums. Pure: no
// CUDA, unit-tested everywhere.
namespace scalebench::gpt {

// The rank's place: tp groups are consecutive ranks, then the dp replicas of a pipeline stage,
// then the stages (rank = (pp_rank x dp + dp_rank) x tp + tp_rank, Megatron's order): a stage's
// tp and dp groups stay close, its pipeline neighbours are dp x tp ranks away (across nodes first).
struct Placement {
  int dp = 1, tp = 1, pp = 1;
  int dp_rank = 0, tp_rank = 0, pp_rank = 0;
  static Placement of(int rank, int dp, int tp, int pp = 1);
};

// GPT-2 ties the token embedding to the head. With pp > 1 the last stage keeps its own copy of
// it under this name (initialised as wte, its gradient summed with the first stage's before the
// optimizer, so both stay the one tensor of the unsplit model); the gradient norm counts it once,
// on the first stage.
inline constexpr const char* kTiedHeadCopy = "wte.head_copy";
// The name of the unsplit model's tensor a stage's tensor is (the copy: wte).
std::string whole_tensor_name(const std::string& name);

// parameter_layout with each tensor cut to this tp rank's shard (tp_plan): rows or columns of the
// split ones, replicated ones whole; offsets contiguous in the same order. tp = 1: the full layout.
std::vector<Tensor> local_layout(const ModelShape& m, int seq, int tp, int tp_rank);
// What the output head and the loss cost per token against one block, for balancing pipeline
// stages (stage_blocks' head_blocks): 2 x padded_vocab x width multiply-adds against a block's
// projections and MLP (2 x its weights) and attention over the sequence (4 x seq x width), the
// forward's counts, which the backward's follow. GPT-2 124M at seq 1024: 4.47 blocks.
double head_cost_in_blocks(const ModelShape& m, int seq);

// local_layout of a pipeline stage's tensors only: the embeddings on the first stage, its blocks,
// the final norm and the head on the last (a tied head: kTiedHeadCopy, after the final norm, unless
// the stage holds wte itself); offsets contiguous in that order. One stage of one: local_layout.
std::vector<Tensor> stage_layout(const ModelShape& m, int seq, int tp, int tp_rank, const StageBlocks& stage);
// The same for a rank's chunks (rank_chunks, virtual stages): the blocks of all of them, in the
// model's order, the embeddings if one holds them, the final norm and the head if one holds them.
std::vector<Tensor> stage_layout(const ModelShape& m, int seq, int tp, int tp_rank,
                                 const std::vector<StageBlocks>& chunks);

// A group of consecutive tensors of the flat buffer whose gradients travel in one collective. The
// backward pass runs from the last block to the first, so the buckets run from the end of the
// buffer to its start; a bucket is complete once block `ready_after` has finished its backward
// (-1: after the embedding's, the last thing the backward pass writes).
struct GradBucket {
  long long begin = 0, end = 0;  // elements of the (padded) flat buffer; end - begin is a multiple of pad
  int ready_after = 0;
  std::vector<std::string> tensors;  // in buffer order
};
struct BucketPlan {
  std::vector<Tensor> tensors;      // the layout with offsets moved so that each bucket is padded
  std::vector<GradBucket> buckets;  // in backward (launch) order
  long long total = 0;              // elements of the padded buffer
};
// Whole blocks per bucket (a block's tensors never straddle two), closed once it holds at least
// `target_bytes` of `elem_bytes` gradients. The final norm and an untied head (after the blocks)
// join the last block's bucket; the embeddings (before the blocks) join the first block's bucket,
// which is then ready only after the embedding. Each bucket is padded to a multiple of `pad`
// elements (ZeRO: dp x 64, zero_padded_size; else 1).
BucketPlan plan_buckets(const std::vector<Tensor>& layout, long long target_bytes, int elem_bytes, long long pad = 1);

// ZeRO-1: rank `dp_rank` of `dp` owns the dp_rank-th equal slice of every (padded) bucket;
// reduce-scatter leaves that slice's summed gradients in place and the
// all-gather spreads its updated parameters. `state` is where its fp32 master and moments live in
// the rank's optimizer buffers (consecutive over the buckets).
struct ShardPiece {
  long long begin = 0, end = 0;  // elements of the flat buffer
  long long state = 0;
};
std::vector<ShardPiece> zero_pieces(const BucketPlan& plan, int dp, int dp_rank);

// The ranges of the gradient buffer this rank adds to the global norm's square, with their
// weights: a tensor replicated over the tp ranks counts 1/tp on each (their gradients are equal),
// a split one 1; a pipeline stage's kTiedHeadCopy is not counted (the first stage counts wte).
// Within `pieces` only (ZeRO-1: this rank's shards; empty: the whole buffer).
struct NormRange {
  long long begin = 0, end = 0;
  float weight = 1.f;
};
std::vector<NormRange> norm_ranges(const ModelShape& m, int seq, int tp, const BucketPlan& plan,
                                   const std::vector<ShardPiece>& pieces);

// Sequence parallelism: the tensors every tp rank holds whole but applies to its own token rows
// only (the embeddings, the norms, the head), so that its gradient of them is its rows' part. The
// row-parallel layers' biases are not among them: their gradient comes from the all-gathered rows.
bool applied_to_row_shards(TensorKind kind);
// Their ranges in `plan`'s buffer, which the tp ranks sum (all-reduce) after the last micro-batch's
// backward pass, before the data-parallel reduction sends them: element l + 1 holds those complete
// once block l has finished its backward pass, element 0 those complete after the embedding's
// (plan_buckets' ready_after: the final norm and the head go with the last block). Adjacent
// ranges are merged. Replicated again once summed, they count 1/tp in norm_ranges.
std::vector<std::vector<Range>> sequence_parallel_sums(const BucketPlan& plan);

}  // namespace scalebench::gpt
