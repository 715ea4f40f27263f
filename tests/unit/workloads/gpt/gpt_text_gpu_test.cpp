// The gpt workload trained on real text on the GPU; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/text_training.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

// gpt2-tiny with the byte vocabulary, 50 steps on a 300 kB slice of the fortunes: the held-out
// loss starts at the uniform guess's ln 256 = 5.545 and falls well below it (guessing by the bytes'
// frequencies alone scores 3.3 nats per byte on the fortunes).
TEST(GptTextGpu, TinyModelLearnsFortunesWellBelowTheUniformLoss) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  // Without the package (a bare GPU machine), this repository's own docs/*.md: English text too.
  const std::string path = std::filesystem::exists(kFortunesDir) ? std::string(kFortunesDir)
                                                                 : std::string(SCALEBENCH_TEST_DATA) + "/../../docs";
  TextCorpus corpus = read_text_corpus(path);
  corpus.bytes.resize(std::min<std::size_t>(corpus.bytes.size(), 300'000));
  TextLayout l;
  l.seq = 128;
  l.micro_batch = 16;
  l.eval_batches = 4;
  TextBatches data(corpus, l);
  ModelShape m = model_shape("gpt2-tiny");
  m.vocab = m.padded_vocab = kByteVocab;
  gpu::Stream s;
  GptModel model(m, l.micro_batch, l.seq, 7, s.get(), Attention::kCudnn);
  const RankMean one_rank = [](double v) { return v; };
  const TextTraining r = train_on_text(model, s.get(), data, TextSchedule{1, 50, 25, 0, Hyper{3e-3f}}, one_rank);
  EXPECT_NEAR(r.eval_loss_initial, std::log(256.0), 0.2);
  EXPECT_LT(r.eval_loss, 0.75 * std::log(256.0)) << r.curve_json().dump();
  EXPECT_TRUE(std::isfinite(r.train_loss));
  // Points at step 1, every step (50 / 100 rounds up to 1), evaluations at 25 and 50.
  ASSERT_EQ(r.curve.size(), 50u);
  EXPECT_EQ(r.curve.front().step, 1);
  EXPECT_FALSE(r.curve.front().eval_loss.has_value());
  ASSERT_TRUE(r.curve[24].eval_loss.has_value());
  ASSERT_TRUE(r.curve.back().eval_loss.has_value());
  EXPECT_EQ(*r.curve.back().eval_loss, r.eval_loss);
  EXPECT_LT(r.curve.back().train_loss, r.curve.front().train_loss);
  EXPECT_EQ(r.step_seconds.size(), 2u);
  EXPECT_GT(r.train_seconds, 0);
}
#endif
