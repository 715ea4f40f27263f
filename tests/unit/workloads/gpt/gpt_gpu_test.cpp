// GPU checks of the gpt workload's training step; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/gpt_bench.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;
}  // namespace

// The tiny model's bf16 gradients against fp64 finite differences of the host reference.
TEST(GptGpu, GradientCheckAgainstFp64) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const GradCheck g = gradient_check("gpt2-tiny", 2, 32, 8, 0.1, 3);
  EXPECT_TRUE(g.ok) << g.to_json().dump();
  EXPECT_LT(g.worst_relative_error, 0.05) << g.worst_tensor;
  EXPECT_NEAR(g.loss_gpu, g.loss_reference, 0.01 * g.loss_reference);
}

// Ten steps on one batch lower the loss; gradient accumulation over 2 micro-batches of the same
// tokens gives the loss and update of one micro-batch.
TEST(GptGpu, TrainsAndAccumulates) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  GptModel a(model_shape("gpt2-tiny"), 2, 64, 5, s.get());
  a.step(1, Hyper{});
  const float first = a.loss();
  for (int i = 0; i < 9; ++i) a.step(1, Hyper{1e-3f});
  EXPECT_LT(a.loss(), first);
  GptModel one(model_shape("gpt2-tiny"), 2, 64, 9, s.get()), two(model_shape("gpt2-tiny"), 2, 64, 9, s.get());
  one.step(1, Hyper{});
  two.step(2, Hyper{});
  EXPECT_NEAR(one.loss(), two.loss(), 1e-4);
  const std::vector<float> p1 = one.master(), p2 = two.master();
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < p1.size(); ++i) {
    diff += (p1[i] - p2[i]) * (p1[i] - p2[i]);
    norm += p1[i] * p1[i];
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-2);
}

// A step captured as a CUDA graph and replayed trains as the same steps run one kernel launch at a
// time: capturing runs nothing, and the replays carry on AdamW's step count (its bias corrections
// change every step, so a replay that repeated the captured step's count would drift).
TEST(GptGpu, GraphedStepsTrainAsEagerStepsDo) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  for (const char* name : {"gpt2-tiny", "llama-tiny"}) {
    const ModelShape m = model_shape(name);
    const Hyper h{1e-3f};
    GptModel eager(m, 2, 64, 21, s.get(), Attention::kCudnn), graphed(m, 2, 64, 21, s.get(), Attention::kCudnn);
    for (int i = 0; i < 6; ++i) eager.step(2, h);
    graphed.step(2, h);
    const std::vector<float> after_one = graphed.master();
    graphed.capture_step(2, h);
    EXPECT_EQ(graphed.master(), after_one) << name << ": capturing ran the step";
    for (int i = 0; i < 5; ++i) graphed.replay_step();
    EXPECT_NEAR(graphed.loss(), eager.loss(), 2e-3 * eager.loss()) << name;
    const std::vector<float> a = eager.master(), b = graphed.master();
    double diff = 0, norm = 0, moved = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      diff += (a[i] - b[i]) * (a[i] - b[i]);
      norm += a[i] * a[i];
      moved += (b[i] - after_one[i]) * (b[i] - after_one[i]);
    }
    EXPECT_LT(std::sqrt(diff / norm), 1e-3) << name;
    EXPECT_GT(std::sqrt(moved / norm), 1e-4) << name << ": the replays did not train";
  }
}

// cuDNN's fused attention against the naive path on the same weights and tokens: the forward's
// loss, every gradient (the attention's reach the QKV weights and everything before them) and
// the fp64 gradient check.
TEST(GptGpu, CudnnAttentionMatchesNaive) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  const ModelShape m = model_shape("gpt2-tiny");
  GptModel naive(m, 2, 64, 21, s.get(), Attention::kNaive), fused(m, 2, 64, 21, s.get(), Attention::kCudnn);
  for (GptModel* x : {&naive, &fused}) {
    x->forward(0, 1);
    x->backward(0);
  }
  EXPECT_NEAR(fused.loss(), naive.loss(), 2e-3 * std::abs(naive.loss()));
  const std::vector<float> gn = naive.grads(), gf = fused.grads();
  ASSERT_EQ(gn.size(), gf.size());
  for (const Tensor& t : naive.layout()) {
    double diff = 0, norm = 0;
    for (long long i = t.offset; i < t.offset + t.numel(); ++i) {
      const double d = gf[static_cast<std::size_t>(i)] - gn[static_cast<std::size_t>(i)];
      diff += d * d;
      norm += static_cast<double>(gn[static_cast<std::size_t>(i)]) * gn[static_cast<std::size_t>(i)];
    }
    EXPECT_LT(std::sqrt(diff / std::max(norm, 1e-30)), 5e-2) << t.name;
  }
  const GradCheck g = gradient_check("gpt2-tiny", 2, 32, 8, 0.1, 3, Attention::kCudnn);
  EXPECT_TRUE(g.ok) << g.to_json().dump();
}
// The Llama-style step (RMSNorm, rotary positions, grouped-query attention through cuDNN, SwiGLU,
// untied head) against fp64 finite differences of the host reference: the tiny model has 4 query
// heads sharing 2 KV heads, so dK and dV sum over their query heads.
TEST(GptGpu, LlamaGradientCheckAgainstFp64) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const GradCheck g = gradient_check("llama-tiny", 2, 32, 8, 0.1, 3, Attention::kCudnn);
  EXPECT_TRUE(g.ok) << g.to_json().dump();
  EXPECT_LT(g.worst_relative_error, 0.05) << g.worst_tensor;
  EXPECT_NEAR(g.loss_gpu, g.loss_reference, 0.01 * g.loss_reference);
  // Every tensor of the layout was sampled, the untied head and the gate among them.
  EXPECT_TRUE(g.per_tensor.contains("head.weight"));
  EXPECT_TRUE(g.per_tensor.contains("h.1.gate.weight"));
}

// Ten Llama steps on one batch lower the loss; two accumulated micro-batches of the same tokens
// give the loss and update of one (the embedding's gradient rows add up across them).
TEST(GptGpu, LlamaTrainsAndAccumulates) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  const ModelShape m = model_shape("llama-tiny");
  GptModel a(m, 2, 64, 5, s.get(), Attention::kCudnn);
  a.step(1, Hyper{});
  const float first = a.loss();
  for (int i = 0; i < 9; ++i) a.step(1, Hyper{1e-3f});
  EXPECT_LT(a.loss(), first);
  EXPECT_TRUE(std::isfinite(a.grad_norm()));
  GptModel one(m, 2, 64, 9, s.get(), Attention::kCudnn), two(m, 2, 64, 9, s.get(), Attention::kCudnn);
  one.step(1, Hyper{});
  two.step(2, Hyper{});
  EXPECT_NEAR(one.loss(), two.loss(), 1e-4);
  const std::vector<float> p1 = one.master(), p2 = two.master();
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < p1.size(); ++i) {
    diff += (p1[i] - p2[i]) * (p1[i] - p2[i]);
    norm += p1[i] * p1[i];
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-2);
}
// One block of the 8B's shapes (width 4096, 32 query heads on 8 KV heads of 128, SwiGLU 14336)
// with a small vocabulary so that it takes about 4 GiB: cuDNN has plans for its grouped-query
// attention, the untrained model's loss is that of random logits, and steps on one batch lower
// it. The final RMSNorm's rows have unit RMS and the head's weights std 0.02, so the logits have
// std 0.02 x sqrt(4096) = 1.28 and the expected loss is ln(512) + 1.28^2 / 2 = 7.06.
TEST(GptGpu, Llama8bShapedBlockTrains) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  ModelShape m = model_shape("llama3-8b", 1);
  m.vocab = m.padded_vocab = 512;
  gpu::Stream s;
  GptModel model(m, 1, 512, 13, s.get(), Attention::kCudnn);
  model.step(1, Hyper{});
  const float first = model.loss();
  EXPECT_NEAR(first, std::log(512.f) + 0.5f * 1.28f * 1.28f, 0.3f);
  for (int i = 0; i < 4; ++i) model.step(1, Hyper{1e-3f});
  EXPECT_TRUE(std::isfinite(model.loss()));
  EXPECT_LT(model.loss(), first);
}
#endif
