// Tensor parallelism proven on one GPU: the k tp shards of the GPT-2 (and Llama) step run side by side on one
// GPU (one thread and stream each), their partial sums added as NCCL's all-reduce would (with
// sequence parallelism: gathered and reduce-scattered as NCCL's all-gather and reduce-scatter
// would), and the loss and every gradient shard must match the unsplit model's. The shards are cut
// by the code the multi-GPU run uses (tp_plan, local_layout, copy_shard, sequence_rows). Skipped
// where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "tests/unit/workloads/gpt/one_gpu_collectives.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/gpt_parallel.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;
using scalebench::test_support::Hub;
using scalebench::test_support::OneGpuTpReduce;
using scalebench::test_support::shard_of;

struct ShardResult {
  float loss = 0;
  std::vector<float> grads;
  std::vector<Tensor> layout;
};

void expect_tp_matches(const char* model, int k, Attention attention, bool sequence_parallel = false,
                       bool recompute = false) {
  const ModelShape m = model_shape(model);
  const int B = sequence_parallel ? 3 : 2, T = 64;  // 3: row shards that straddle sequences
  const unsigned long long seed = 17;
  gpu::Stream s;
  GptModel whole(m, B, T, seed, s.get(), attention);
  whole.forward(0, 1);
  whole.backward(0);
  const float loss = whole.loss();
  const std::vector<float> g = whole.grads();

  Hub hub(k);
  std::vector<ShardResult> out(static_cast<std::size_t>(k));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(k));
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r)
    threads.emplace_back([&, r] {
      try {
        CUDA_CHECK(cudaSetDevice(0));
        gpu::Stream rs;
        OneGpuTpReduce reduce(hub, r);
        Parallel par;
        par.at = Placement::of(r, 1, k);
        par.tp_reduce = &reduce;
        par.sequence_parallel = sequence_parallel;
        GptModel shard(m, B, T, seed, rs.get(), attention, par, recompute);
        shard.forward(0, 1);
        shard.backward(0);
        ShardResult& x = out[static_cast<std::size_t>(r)];
        x.loss = shard.loss();
        x.grads = shard.grads();
        x.layout = shard.layout();
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  const std::vector<Tensor> layout = parameter_layout(m, T);
  for (int r = 0; r < k; ++r) {
    const ShardResult& x = out[static_cast<std::size_t>(r)];
    EXPECT_NEAR(x.loss, loss, 2e-3 * std::abs(loss))
        << model << " tp " << k << " rank " << r << " sequence_parallel " << sequence_parallel;
    const std::vector<TensorShard> plan = tp_plan(m, T, k, r);
    for (std::size_t i = 0; i < layout.size(); ++i) {
      const Tensor& t = layout[i];
      const std::vector<float> full(g.begin() + t.offset, g.begin() + t.offset + t.numel());
      const std::vector<float> want = shard_of(full, t, plan[i]);
      ASSERT_EQ(x.layout[i].numel(), static_cast<long long>(want.size())) << t.name;
      double diff = 0, norm = 0;
      for (std::size_t j = 0; j < want.size(); ++j) {
        const double d = x.grads[static_cast<std::size_t>(x.layout[i].offset) + j] - want[j];
        diff += d * d;
        norm += static_cast<double>(want[j]) * want[j];
      }
      EXPECT_LT(std::sqrt(diff / std::max(norm, 1e-30)), 5e-2)
          << model << " tp " << k << " rank " << r << " sequence_parallel " << sequence_parallel << " " << t.name;
    }
  }
}
}  // namespace

TEST(GptGpuTp, ShardsSummedMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (int k : {2, 4}) {
    expect_tp_matches("gpt2-tiny", k, Attention::kCudnn);
    expect_tp_matches("gpt2-tiny", k, Attention::kNaive);
  }
  // The Llama step: 4 query heads on 2 KV heads, SwiGLU 172 wide (86 a rank), rotary positions.
  expect_tp_matches("llama-tiny", 2, Attention::kCudnn);
}

// Sequence parallelism: each shard's norms, residual stream, head and loss hold its B x T / k
// token rows (3 x 64 / k: with k = 2 rank 1 starts at position 32 of the second sequence, with
// k = 4 the shards straddle sequences too); the loss and the gradients, the replicated tensors'
// summed over the shards, must again be the unsplit model's, with and without recomputation.
TEST(GptGpuTp, SequenceParallelShardsMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (int k : {2, 4}) {
    expect_tp_matches("gpt2-tiny", k, Attention::kCudnn, true);
    expect_tp_matches("gpt2-tiny", k, Attention::kNaive, true);
  }
  expect_tp_matches("gpt2-tiny", 2, Attention::kCudnn, true, true);
  expect_tp_matches("llama-tiny", 2, Attention::kCudnn, true);
  expect_tp_matches("llama-tiny", 2, Attention::kCudnn, true, true);
}

// Sequence parallelism keeps the norms' and the residual stream's rows, the logits and the loss's
// rows on 1/tp of them: less memory than tp alone.
TEST(GptGpuTp, SequenceParallelTakesLessMemory) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (const char* name : {"gpt2-tiny", "llama-tiny"}) {
    const ModelShape m = model_shape(name);
    Parallel tp;
    tp.at = Placement::of(1, 1, 2);
    Parallel sp = tp;
    sp.sequence_parallel = true;
    for (bool recompute : {false, true})
      EXPECT_LT(model_bytes(m, 4, 64, Attention::kCudnn, sp, recompute),
                model_bytes(m, 4, 64, Attention::kCudnn, tp, recompute))
          << name << " recompute " << recompute;
  }
}

// ZeRO-1's padded buckets and per-slice AdamW on one rank (dp 1: the slice is the whole bucket)
// give the weights of the plain optimizer.
TEST(GptGpuTp, ZeroLayoutOnOneRankMatchesPlainAdamW) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-tiny");
  gpu::Stream s;
  Parallel zero;
  zero.zero = 1;
  zero.bucket_mb = 0.05;  // several buckets
  GptModel plain(m, 2, 64, 23, s.get(), Attention::kCudnn), sharded(m, 2, 64, 23, s.get(), Attention::kCudnn, zero);
  for (int i = 0; i < 3; ++i) {
    plain.step(1, Hyper{1e-3f});
    sharded.step(1, Hyper{1e-3f});
  }
  // The embedding's atomic adds make each run's gradients differ in their last bits.
  EXPECT_NEAR(plain.loss(), sharded.loss(), 1e-3 * plain.loss());
  const std::vector<float> a = plain.params(), b = sharded.params();
  const std::vector<Tensor>& la = plain.layout();
  const std::vector<Tensor>& lb = sharded.layout();
  ASSERT_EQ(la.size(), lb.size());
  // The same arithmetic per element; the gradients differ only by the order of atomic adds (the
  // embedding) and of the norm's sum, which AdamW's first steps amplify for near-zero gradients:
  // compared over the whole model, as GptGpu.TrainsAndAccumulates does.
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < la.size(); ++i)
    for (long long j = 0; j < la[i].numel(); ++j) {
      const double x = a[static_cast<std::size_t>(la[i].offset + j)], y = b[static_cast<std::size_t>(lb[i].offset + j)];
      diff += (x - y) * (x - y);
      norm += x * x;
    }
  EXPECT_LT(std::sqrt(diff / norm), 1e-2);
}
#endif
