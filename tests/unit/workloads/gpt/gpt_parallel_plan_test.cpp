// The gpt workload's parallel layout: tp shards of the parameter buffer, the data-parallel gradient
// buckets in backward order, ZeRO-1's slices and the gradient norm's ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "common/error.hpp"
#include "tests/unit/error_text.hpp"
#include "workloads/gpt/parallel_plan.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using test_support::error_of;

const Tensor& named(const std::vector<Tensor>& t, const std::string& name) {
  for (const Tensor& x : t)
    if (x.name == name) return x;
  throw Error("no tensor " + name);
}
}  // namespace

TEST(GptParallelPlan, PlacementTpGroupsAreConsecutiveRanks) {
  const Placement p = Placement::of(5, 2, 4);
  EXPECT_EQ(p.dp_rank, 1);
  EXPECT_EQ(p.tp_rank, 1);
  EXPECT_EQ(Placement::of(3, 4, 1).dp_rank, 3);
  EXPECT_EQ(Placement::of(3, 1, 4).tp_rank, 3);
  EXPECT_NE(error_of([] { Placement::of(8, 2, 4); }).find("outside"), std::string::npos);
  EXPECT_EQ(error_of([] { Placement::of(0, 1, 0); }).rfind("tp:", 0), 0u);
}

// Pipeline stages are the slowest index: a stage's dp x tp ranks are consecutive.
TEST(GptParallelPlan, PlacementStagesOutermost) {
  const Placement p = Placement::of(13, 2, 4, 2);  // rank 13 = (1 x 2 + 1) x 4 + 1
  EXPECT_EQ(p.pp_rank, 1);
  EXPECT_EQ(p.dp_rank, 1);
  EXPECT_EQ(p.tp_rank, 1);
  EXPECT_EQ(Placement::of(1, 1, 1, 2).pp_rank, 1);
  EXPECT_EQ(Placement::of(2, 2, 1, 2).dp_rank, 0);
  EXPECT_EQ(Placement::of(2, 2, 1, 2).pp_rank, 1);
  EXPECT_NE(error_of([] { Placement::of(16, 2, 4, 2); }).find("outside"), std::string::npos);
  EXPECT_EQ(error_of([] { Placement::of(0, 1, 1, 0); }).rfind("pp:", 0), 0u);
}

// The stages' layouts hold every tensor of the model once, the last stage a copy of the tied
// embedding besides; with one stage the layout is the whole one.
TEST(GptParallelPlan, StageLayoutsSplitTheModel) {
  const ModelShape m = model_shape("gpt2-124m");
  const std::vector<Tensor> whole = parameter_layout(m, 1024);
  const std::vector<Tensor> one = stage_layout(m, 1024, 1, 0, stage_blocks(12, 1, 0));
  ASSERT_EQ(one.size(), whole.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].name, whole[i].name);
    EXPECT_EQ(one[i].offset, whole[i].offset);
  }
  for (int pp : {2, 3, 5}) {
    std::map<std::string, int> seen;
    long long elements = 0;
    for (int s = 0; s < pp; ++s) {
      const StageBlocks b = stage_blocks(m.layers, pp, s);
      const std::vector<Tensor> l = stage_layout(m, 1024, 1, 0, b);
      for (std::size_t i = 0; i < l.size(); ++i) {
        ++seen[l[i].name];
        if (i > 0) {
          EXPECT_EQ(l[i].offset, l[i - 1].offset + l[i - 1].numel());
        }
        if (l[i].layer >= 0) {
          EXPECT_GE(l[i].layer, b.first);
          EXPECT_LT(l[i].layer, b.last);
        }
        if (l[i].name != kTiedHeadCopy) elements += l[i].numel();
      }
      EXPECT_EQ(l.front().name, s == 0 ? "wte" : "h." + std::to_string(b.first) + ".ln1.weight");
      EXPECT_EQ(l.back().name, s == pp - 1 ? kTiedHeadCopy : "h." + std::to_string(b.last - 1) + ".down.bias");
      // The copy's gradient is summed with wte's: the norm counts it on the first stage only.
      double counted = 0;
      for (const NormRange& r : norm_ranges(m, 1024, 1, plan_buckets(l, 25'000'000, 2), {}))
        counted += r.weight * (r.end - r.begin);
      double own = 0;
      for (const Tensor& t : l)
        if (t.name != kTiedHeadCopy) own += static_cast<double>(t.numel());
      EXPECT_EQ(counted, own) << "pp " << pp << " stage " << s;
    }
    EXPECT_EQ(elements, parameter_count(m, 1024)) << "pp " << pp;
    EXPECT_EQ(seen.size(), whole.size() + 1) << "pp " << pp;
    for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
    EXPECT_EQ(whole_tensor_name(kTiedHeadCopy), "wte");
  }
  // Llama's head is its own tensor: no copy, on the last stage.
  const ModelShape l = model_shape("llama-tiny");
  const std::vector<Tensor> last = stage_layout(l, 64, 1, 0, stage_blocks(2, 2, 1));
  EXPECT_EQ(last.back().name, "head.weight");
}

// With virtual stages a rank's layout holds its chunks' blocks (not adjacent ones), the
// embeddings on rank 0 and the head's copy on the last rank; over the ranks every tensor once.
TEST(GptParallelPlan, ChunkLayoutsSplitTheModel) {
  const ModelShape m = model_shape("gpt2-124m");
  const double head = head_cost_in_blocks(m, 1024);
  for (const auto& [pp, v] : {std::pair{2, 2}, {2, 3}, {3, 2}, {4, 3}}) {
    std::map<std::string, int> seen;
    for (int r = 0; r < pp; ++r) {
      const std::vector<StageBlocks> chunks = rank_chunks(m.layers, pp, v, r, head);
      const std::vector<Tensor> l = stage_layout(m, 1024, 1, 0, chunks);
      std::vector<int> layers;
      for (std::size_t i = 0; i < l.size(); ++i) {
        ++seen[l[i].name];
        if (i > 0) {
          EXPECT_EQ(l[i].offset, l[i - 1].offset + l[i - 1].numel());
        }
        if (l[i].layer >= 0 && (layers.empty() || layers.back() != l[i].layer)) layers.push_back(l[i].layer);
      }
      std::vector<int> want;
      for (const StageBlocks& c : chunks)
        for (int b = c.first; b < c.last; ++b) want.push_back(b);
      EXPECT_EQ(layers, want) << "pp " << pp << " v " << v << " rank " << r;
      EXPECT_EQ(l.front().name == "wte", r == 0);
      EXPECT_EQ(l.back().name == kTiedHeadCopy, r == pp - 1);
    }
    for (const Tensor& t : parameter_layout(m, 1024)) EXPECT_EQ(seen[t.name], 1) << t.name;
    EXPECT_EQ(seen[kTiedHeadCopy], 1);
  }
  // One chunk: the stage's layout.
  const std::vector<Tensor> a = stage_layout(m, 1024, 1, 0, stage_blocks(12, 2, 1, head));
  const std::vector<Tensor> b = stage_layout(m, 1024, 1, 0, rank_chunks(12, 2, 1, 1, head));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
}

TEST(GptParallelPlan, LocalLayoutHoldsTheRanksShards) {
  const ModelShape m = model_shape("gpt2-124m");
  const std::vector<Tensor> whole = local_layout(m, 1024, 1, 0);
  const std::vector<Tensor> full = parameter_layout(m, 1024);
  ASSERT_EQ(whole.size(), full.size());
  for (std::size_t i = 0; i < full.size(); ++i) EXPECT_EQ(whole[i].offset, full[i].offset) << full[i].name;
  const std::vector<Tensor> l = local_layout(m, 1024, 4, 3);
  EXPECT_EQ(named(l, "h.0.qkv.weight").rows, 3 * 192);
  EXPECT_EQ(named(l, "h.0.qkv.weight").cols, 768);
  EXPECT_EQ(named(l, "h.0.qkv.bias").rows, 3 * 192);
  EXPECT_EQ(named(l, "h.0.proj.weight").rows, 768);
  EXPECT_EQ(named(l, "h.0.proj.weight").cols, 192);
  EXPECT_EQ(named(l, "h.0.proj.bias").rows, 768);  // row-split layer's bias: whole, added once
  EXPECT_EQ(named(l, "h.0.up.weight").rows, 768);
  EXPECT_EQ(named(l, "h.0.down.weight").cols, 768);
  EXPECT_EQ(named(l, "wte").rows, 50304);
  for (std::size_t i = 1; i < l.size(); ++i) EXPECT_EQ(l[i].offset, l[i - 1].offset + l[i - 1].numel());
}

// 124M's block is 7,087,872 parameters (14.2 MB in bf16): two blocks fill a 25 MB bucket. The last
// blocks' gradients are complete first; the embeddings' (written by the head first and the
// embedding last) only at the end.
TEST(GptParallelPlan, BucketsFollowTheBackwardPass) {
  const ModelShape m = model_shape("gpt2-124m");
  const std::vector<Tensor> layout = parameter_layout(m, 1024);
  const BucketPlan p = plan_buckets(layout, 25'000'000, 2);
  ASSERT_EQ(p.buckets.size(), 7u);
  EXPECT_EQ(p.buckets[0].ready_after, 10);
  EXPECT_EQ(p.buckets[0].tensors.front(), "h.10.ln1.weight");
  EXPECT_EQ(p.buckets[0].tensors.back(), "ln_f.bias");
  for (std::size_t k = 1; k < 6; ++k) {
    EXPECT_EQ(p.buckets[k].ready_after, 10 - 2 * static_cast<int>(k)) << k;
    EXPECT_EQ(p.buckets[k].tensors.size(), 24u) << k;  // two whole blocks
  }
  EXPECT_EQ(p.buckets[6].ready_after, -1);
  EXPECT_EQ(p.buckets[6].tensors, (std::vector<std::string>{"wte", "wpe"}));
  // Unpadded: the buffer is parameter_layout's; the buckets tile it from the end down.
  EXPECT_EQ(p.total, parameter_count(m, 1024));
  EXPECT_EQ(p.buckets[0].end, p.total);
  for (std::size_t k = 1; k < p.buckets.size(); ++k) EXPECT_EQ(p.buckets[k].end, p.buckets[k - 1].begin);
  EXPECT_EQ(p.buckets.back().begin, 0);
  for (std::size_t i = 0; i < layout.size(); ++i) EXPECT_EQ(p.tensors[i].offset, layout[i].offset);
  // Every bucket but the embeddings' holds at least the target.
  for (std::size_t k = 0; k + 1 < p.buckets.size(); ++k)
    EXPECT_GE(2 * (p.buckets[k].end - p.buckets[k].begin), 25'000'000) << k;
  // Smaller buckets: one block each; a bucket never splits a block.
  const BucketPlan one = plan_buckets(layout, 1'000'000, 2);
  EXPECT_EQ(one.buckets.size(), 13u);
  EXPECT_EQ(one.buckets[0].ready_after, 11);
  EXPECT_EQ(one.buckets[11].ready_after, 0);
  EXPECT_EQ(error_of([&] { plan_buckets(layout, 0, 2); }).rfind("bucket_mb:", 0), 0u);
}

TEST(GptParallelPlan, LlamaHeadJoinsTheLastBlock) {
  const ModelShape m = model_shape("llama-tiny");
  const BucketPlan p = plan_buckets(parameter_layout(m, 64), 1, 2);
  ASSERT_EQ(p.buckets.size(), 3u);
  EXPECT_EQ(p.buckets[0].tensors.back(), "head.weight");
  EXPECT_EQ(p.buckets[0].ready_after, 1);
  EXPECT_EQ(p.buckets[2].tensors, (std::vector<std::string>{"wte"}));
  EXPECT_EQ(p.buckets[2].ready_after, -1);
}

// ZeRO-1: each bucket padded to dp x 64 (zero_padded_size), rank r owns its r-th slice of every
// bucket; the slices of all ranks tile the buckets, and the optimizer state is 1/dp of the buffer.
TEST(GptParallelPlan, ZeroSlicesEveryBucket) {
  const ModelShape m = model_shape("gpt2-tiny");
  const std::vector<Tensor> layout = parameter_layout(m, 64);
  for (int dp : {2, 4}) {
    const BucketPlan p = plan_buckets(layout, 20'000, 2, zero_padded_size(1, dp));
    ASSERT_GT(p.buckets.size(), 1u);
    EXPECT_GE(p.total, parameter_count(m, 64));
    for (const GradBucket& b : p.buckets) {
      EXPECT_EQ((b.end - b.begin) % (64 * dp), 0);
      long long n = 0;
      for (const std::string& t : b.tensors) n += named(p.tensors, t).numel();
      EXPECT_EQ(b.end - b.begin, zero_padded_size(n, dp));
      EXPECT_EQ(named(p.tensors, b.tensors.front()).offset, b.begin);
    }
    // No two tensors overlap.
    std::vector<Tensor> sorted = p.tensors;
    std::sort(sorted.begin(), sorted.end(), [](const Tensor& a, const Tensor& b) { return a.offset < b.offset; });
    for (std::size_t i = 1; i < sorted.size(); ++i)
      EXPECT_GE(sorted[i].offset, sorted[i - 1].offset + sorted[i - 1].numel());
    std::map<long long, int> owner;
    long long state = 0;
    for (int r = 0; r < dp; ++r) {
      const std::vector<ShardPiece> pieces = zero_pieces(p, dp, r);
      ASSERT_EQ(pieces.size(), p.buckets.size());
      long long at = 0;
      for (std::size_t k = 0; k < pieces.size(); ++k) {
        const long long per = (p.buckets[k].end - p.buckets[k].begin) / dp;
        EXPECT_EQ(pieces[k].begin, p.buckets[k].begin + r * per);
        EXPECT_EQ(pieces[k].end - pieces[k].begin, per);
        EXPECT_EQ(pieces[k].state, at);
        at += per;
        owner[pieces[k].begin] = r;
      }
      EXPECT_EQ(at * dp, p.total);
      state += at;
    }
    EXPECT_EQ(state, p.total);
    EXPECT_EQ(owner.size(), p.buckets.size() * dp);
  }
  EXPECT_NE(error_of([&] { zero_pieces(plan_buckets(layout, 1, 2, 1), 3, 0); }).find("zero:"), std::string::npos);
}

// Over all ranks of a dp x tp layout, the weighted ranges count every parameter exactly once.
TEST(GptParallelPlan, NormRangesCountEachParameterOnce) {
  const ModelShape m = model_shape("gpt2-tiny");
  for (int tp : {1, 2, 4})
    for (int dp : {1, 2}) {
      double counted = 0;
      for (int t = 0; t < tp; ++t) {
        const BucketPlan p = plan_buckets(local_layout(m, 64, tp, t), 20'000, 2, dp > 1 ? zero_padded_size(1, dp) : 1);
        for (int d = 0; d < dp; ++d) {
          const std::vector<ShardPiece> pieces = dp > 1 ? zero_pieces(p, dp, d) : std::vector<ShardPiece>{};
          for (const NormRange& r : norm_ranges(m, 64, tp, p, pieces)) counted += r.weight * (r.end - r.begin);
        }
      }
      EXPECT_NEAR(counted, static_cast<double>(parameter_count(m, 64)), 1e-3) << "tp " << tp << " dp " << dp;
    }
  // One whole-weight range on one GPU.
  const BucketPlan one = plan_buckets(parameter_layout(m, 64), 20'000, 2);
  const std::vector<NormRange> r = norm_ranges(m, 64, 1, one, {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].end, parameter_count(m, 64));
}

// Sequence parallelism: tp contiguous equal blocks of the token rows, in rank order.
TEST(GptParallelPlan, SequenceRowsAreContiguousEqualBlocks) {
  EXPECT_EQ(sequence_rows(4096, 2, 1), (Range{2048, 4096}));
  EXPECT_EQ(sequence_rows(4096, 1, 0), (Range{0, 4096}));
  long long next = 0;
  for (int r = 0; r < 4; ++r) {
    const Range x = sequence_rows(8 * 64, 4, r);
    EXPECT_EQ(x.begin, next);
    EXPECT_EQ(x.end - x.begin, 128);
    next = x.end;
  }
  EXPECT_EQ(next, 8 * 64);
  EXPECT_EQ(error_of([] {
              sequence_rows(10, 4, 0);
            }).rfind("sequence_parallel: micro_batch x seq = 10 token rows do not split into tp = 4", 0),
            0u);
  EXPECT_NE(error_of([] { sequence_rows(8, 4, 4); }).find("outside"), std::string::npos);
}

namespace {
// Elements of `plan`'s buffer that sequence_parallel_sums covers, and the tensors they belong to.
long long summed_elements(const BucketPlan& plan, std::vector<std::string>& tensors) {
  long long n = 0;
  for (const std::vector<Range>& layer : sequence_parallel_sums(plan))
    for (const Range& r : layer) {
      n += r.end - r.begin;
      for (const Tensor& t : plan.tensors)
        if (t.offset >= r.begin && t.offset + t.numel() <= r.end) tensors.push_back(t.name);
    }
  return n;
}
TEST(GptParallelPlan, TheHeadCostsAsManyBlocksAsItsMultiplyAddsSay) {
  // 2 x 50,304 x 768 against 2 x 12 x 768^2 + 4 x 1024 x 768 a token: 4.466 blocks.
  EXPECT_NEAR(head_cost_in_blocks(model_shape("gpt2-124m"), 1024), 4.466, 0.001);
  // A longer sequence makes the blocks (attention) costlier and the head relatively cheaper.
  EXPECT_LT(head_cost_in_blocks(model_shape("gpt2-124m"), 2048), head_cost_in_blocks(model_shape("gpt2-124m"), 1024));
}

}  // namespace

// The tensors applied to row shards (embeddings, norms, head) are summed over tp, grouped by the
// block after whose backward pass they are complete; the row-parallel biases are not (their
// gradient comes from the all-gathered rows), nor any split tensor.
TEST(GptParallelPlan, SequenceParallelSumsTheRowShardTensors) {
  const ModelShape m = model_shape("gpt2-tiny");  // 2 layers, width 64
  const BucketPlan p = plan_buckets(local_layout(m, 64, 2, 1), 20'000, 2);
  const std::vector<std::vector<Range>> sums = sequence_parallel_sums(p);
  ASSERT_EQ(sums.size(), 3u);
  const Tensor &wte = named(p.tensors, "wte"), &wpe = named(p.tensors, "wpe");
  ASSERT_EQ(sums[0].size(), 1u);  // after the embedding: wte and wpe, adjacent
  EXPECT_EQ(sums[0][0], (Range{wte.offset, wpe.offset + wpe.numel()}));
  ASSERT_EQ(sums[1].size(), 2u);  // block 0: ln1 (weight, bias) and ln2
  EXPECT_EQ(sums[1][0],
            (Range{named(p.tensors, "h.0.ln1.weight").offset, named(p.tensors, "h.0.ln1.bias").offset + 64}));
  EXPECT_EQ(sums[1][1],
            (Range{named(p.tensors, "h.0.ln2.weight").offset, named(p.tensors, "h.0.ln2.bias").offset + 64}));
  ASSERT_EQ(sums[2].size(), 3u);  // block 1 and, with it, the final norm
  EXPECT_EQ(sums[2][2], (Range{named(p.tensors, "ln_f.weight").offset, named(p.tensors, "ln_f.bias").offset + 64}));
  std::vector<std::string> names;
  EXPECT_EQ(summed_elements(p, names), wte.numel() + wpe.numel() + (2 * 4 + 2) * 64);
  for (const std::string& n : names) EXPECT_EQ(n.find("proj"), std::string::npos) << n;
  for (const std::string& n : names) EXPECT_EQ(n.find("down"), std::string::npos) << n;
  // ZeRO-1's padding between buckets moves the ranges, not what they cover.
  std::vector<std::string> padded;
  EXPECT_EQ(summed_elements(plan_buckets(local_layout(m, 64, 2, 1), 20'000, 2, zero_padded_size(1, 2)), padded),
            wte.numel() + wpe.numel() + (2 * 4 + 2) * 64);
  EXPECT_EQ(padded, names);
  // Llama: the untied head goes with the last block, after the final norm.
  const ModelShape l = model_shape("llama-tiny");
  const BucketPlan lp = plan_buckets(local_layout(l, 64, 2, 0), 20'000, 2);
  const std::vector<std::vector<Range>> ls = sequence_parallel_sums(lp);
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_EQ(ls[0], (std::vector<Range>{{named(lp.tensors, "wte").offset, named(lp.tensors, "wte").offset + 512 * 64}}));
  const Tensor& head = named(lp.tensors, "head.weight");
  EXPECT_EQ(ls[2].back(), (Range{named(lp.tensors, "ln_f.weight").offset, head.offset + head.numel()}));
  EXPECT_TRUE(applied_to_row_shards(TensorKind::kHead));
  EXPECT_FALSE(applied_to_row_shards(TensorKind::kAttnOutBias));
  EXPECT_FALSE(applied_to_row_shards(TensorKind::kMlpDownBias));
}
