// Activation recomputation on the GPU: the same training as keeping every activation, in less
// memory. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {

// Four steps of two micro-batches each (the model's synthetic batch) with and without
// recomputation, from the same weights: the first loss (forward only so far) is bit for bit the
// same, the later ones and the weights agree within the atomics' rounding of the backward pass.
void expect_same_training(const ModelShape& m, Attention attention) {
  SCOPED_TRACE(m.name);
  const int B = 2, T = 64;
  gpu::Stream s;
  GptModel keep(m, B, T, 11, s.get(), attention, {}, false), again(m, B, T, 11, s.get(), attention, {}, true);
  for (int step = 0; step < 4; ++step) {
    keep.step(2, Hyper{1e-3f});
    again.step(2, Hyper{1e-3f});
    if (step == 0)
      EXPECT_EQ(keep.loss(), again.loss());
    else
      EXPECT_NEAR(keep.loss(), again.loss(), 1e-3 * std::abs(keep.loss())) << "step " << step;
  }
  const std::vector<float> a = keep.master(), b = again.master();
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += a[i] * a[i];
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-3);
  // The activations of all blocks but one are gone: the arena shrinks by (layers - 1) blocks' worth.
  EXPECT_LT(again.device_bytes(), keep.device_bytes());
  EXPECT_EQ(model_bytes(m, B, T, attention, {}, true), again.device_bytes());
}

}  // namespace

TEST(GptRecomputeGpu, SameLossAndWeightsInLessMemory) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  // 4 layers, so that three blocks are recomputed; both attentions of GPT-2, and the Llama step.
  expect_same_training(model_shape("gpt2-tiny", 4), Attention::kCudnn);
  expect_same_training(model_shape("gpt2-tiny", 4), Attention::kNaive);
  expect_same_training(model_shape("llama-tiny", 4), Attention::kCudnn);
}

// GPT-2 124M at batch 8 x 1024: recomputation saves exactly 11 of the 12 blocks' activations (15
// bf16 rows of the width: LayerNorms, QKV, attention's output, the residual after attention, the
// MLP's 4 x width before and after GELU; fp32 norm statistics and cuDNN's per-head softmax
// statistics), about 2 GB; the residual stream stays.
TEST(GptRecomputeGpu, SavesAllButOneBlocksActivations) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-124m");
  const std::size_t keep = model_bytes(m, 8, 1024, Attention::kCudnn);
  const std::size_t again = model_bytes(m, 8, 1024, Attention::kCudnn, {}, true);
  const std::size_t per_token = 15 * 768 * 2 + 4 * 4 + 12 * 4;
  EXPECT_EQ(keep - again, 11ull * 8 * 1024 * per_token) << keep << " against " << again;
}
#endif
