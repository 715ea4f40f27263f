// The fp64 reference (the gradient check's and the decoder check's ground truth), on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/gpt_reference.hpp"

using namespace scalebench::gpt;

namespace {
std::vector<double> random_params(const ModelShape& m, int T, unsigned seed) {
  const std::vector<Tensor> t = parameter_layout(m, T);
  std::vector<double> p(static_cast<std::size_t>(t.back().offset + t.back().numel()));
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.1);
  for (double& x : p) x = normal(rng);
  return p;
}
}  // namespace

// Grouped-query attention is attention with every KV head repeated for its group of query heads
// (query head h reads KV head h / (heads / kv_heads), Hugging Face's repeat_kv): the tiny model
// with 2 KV heads gives the loss of the same model with 4 KV heads whose K and V rows are copies.
TEST(GptReference, GroupedQueryAttentionIsRepeatedKv) {
  const int B = 2, T = 8;
  const ModelShape gqa = model_shape("llama-tiny");
  ModelShape mha = gqa;
  mha.kv_heads = mha.heads;
  const std::vector<double> p = random_params(gqa, T, 5);
  const std::vector<Tensor> from = parameter_layout(gqa, T), to = parameter_layout(mha, T);
  ASSERT_EQ(from.size(), to.size());
  std::vector<double> q(static_cast<std::size_t>(to.back().offset + to.back().numel()));
  const long long hd = gqa.head_dim(), C = gqa.width, group = gqa.heads / gqa.kv_heads;
  for (std::size_t i = 0; i < from.size(); ++i) {
    ASSERT_EQ(from[i].name, to[i].name);
    const double* src = p.data() + from[i].offset;
    double* dst = q.data() + to[i].offset;
    if (from[i].kind != TensorKind::kQkv) {
      std::copy(src, src + from[i].numel(), dst);
      continue;
    }
    // Rows: query heads as they are, then each K and V head once per query head of its group.
    std::copy(src, src + gqa.heads * hd * C, dst);
    for (int part = 0; part < 2; ++part)
      for (long long h = 0; h < mha.heads; ++h) {
        const double* s = src + ((gqa.heads + part * gqa.kv_heads + h / group) * hd) * C;
        std::copy(s, s + hd * C, dst + ((mha.heads + part * mha.heads + h) * hd) * C);
      }
  }
  std::mt19937 rng(9);
  std::vector<int> tokens(B * T), targets(B * T);
  for (int& x : tokens) x = static_cast<int>(rng() % 512);
  for (int& x : targets) x = static_cast<int>(rng() % 512);
  const double a = reference_loss(gqa, B, T, p, tokens, targets), b = reference_loss(mha, B, T, q, tokens, targets);
  EXPECT_NEAR(a, b, 1e-12 * std::abs(a));
  EXPECT_GT(a, 0.0);
}

// What the decoder check rests on: a position's logits depend only on the tokens up to it, so one
// pass over a finished sequence scores every step of its decode.
TEST(GptReference, LogitsAreCausal) {
  for (const char* name : {"gpt2-tiny", "llama-tiny"}) {
    const ModelShape m = model_shape(name);
    const int seq = 16, T = 10;
    const std::vector<double> p = random_params(m, seq, 3);
    std::vector<int> tokens(T);
    for (int i = 0; i < T; ++i) tokens[i] = (i * 37 + 5) % m.vocab;
    std::vector<int> changed = tokens;
    changed[6] = (changed[6] + 1) % m.vocab;
    const std::vector<double> a = reference_logits(m, seq, 1, T, p, tokens);
    const std::vector<double> b = reference_logits(m, seq, 1, T, p, changed);
    const std::size_t Vp = static_cast<std::size_t>(m.padded_vocab);
    for (std::size_t i = 0; i < 6 * Vp; ++i) ASSERT_EQ(a[i], b[i]) << name << " position " << i / Vp;
    EXPECT_NE(a[6 * Vp], b[6 * Vp]) << name << ": the changed position's logits must change";
  }
}

// The step-by-step greedy decode appends, at each step, the argmax of the last position's logits;
// scored by one pass over the result, every appended token is that position's greedy choice.
TEST(GptReference, GreedyDecodeIsTheArgmaxOfEachPrefix) {
  for (const char* name : {"gpt2-tiny", "llama-tiny"}) {
    const ModelShape m = model_shape(name);
    const int seq = 16;
    const std::vector<double> p = random_params(m, seq, 4);
    const std::vector<int> prompt = {1, 7, 300, 42};
    const std::vector<int> out = reference_greedy(m, seq, p, prompt, 6);
    ASSERT_EQ(out.size(), 10u);
    EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), out.begin()));
    const std::vector<double> logits = reference_logits(m, seq, 1, 10, p, out);
    for (int pos = 3; pos < 9; ++pos)
      EXPECT_EQ(out[pos + 1], greedy_token(m, &logits[static_cast<std::size_t>(pos) * m.padded_vocab]))
          << name << " position " << pos;
    EXPECT_THROW(reference_logits(m, seq, 1, 17, p, std::vector<int>(17, 0)), scalebench::Error);
  }
}
