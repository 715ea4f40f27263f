// GPU checks of the gpt workload's decoder (KV cache, greedy choice); skipped where no GPU is
// visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/checkpoint.hpp"
#include "workloads/gpt/gpt_decoder.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/gpt_reference.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/infer/engine.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;

// Weights with logits spread wide enough that most greedy choices are clear (GPT-2's own 0.02
// makes every logit nearly equal): matrices normal 0.1, norm scales 1 + normal 0.1, biases 0.02.
// Rounded to bf16 first, so that the reference computes with the values the GPU holds.
std::vector<float> spread_weights(const ModelShape& m, int seq, unsigned seed) {
  const std::vector<Tensor> layout = parameter_layout(m, seq);
  std::vector<float> p(static_cast<std::size_t>(layout.back().offset + layout.back().numel()));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const Tensor& t : layout)
    for (long long i = 0; i < t.numel(); ++i) {
      const float z = normal(rng);
      float v = 0.1f * z;
      if (t.kind == TensorKind::kNormWeight) v = 1.f + 0.1f * z;
      if (t.kind == TensorKind::kQkvBias || t.kind == TensorKind::kAttnOutBias || t.kind == TensorKind::kMlpUpBias ||
          t.kind == TensorKind::kMlpDownBias || t.kind == TensorKind::kNormBias)
        v = 0.02f * z;
      p[static_cast<std::size_t>(t.offset + i)] = __bfloat162float(__float2bfloat16(v));
    }
  return p;
}

struct Decoded {
  std::vector<std::vector<int>> sequences;
  std::vector<std::vector<std::vector<float>>> logits;  // [step][slot][vocab]; step 0 is the prefill's
};

Decoded decode(GptDecoder& d, const std::vector<std::vector<int>>& prompts, int steps, bool graphed) {
  Decoded out;
  d.prefill(prompts);
  out.logits.push_back(d.last_logits());
  for (int i = 0; i < steps; ++i) {
    if (graphed)
      d.step_graphed();
    else
      d.step();
    out.logits.push_back(d.last_logits());
  }
  out.sequences = d.sequences();
  return out;
}
}  // namespace

// Two prompts of different lengths decoded 12 steps: at every step each sequence's logits are
// the fp64 reference's at that position (one pass over the finished sequence scores every step:
// the reference is causal), and each chosen token is the reference's greedy choice, or within
// bf16's error of its best logit where two are that close.
class GptDecoderFamilyGpu : public ::testing::TestWithParam<const char*> {};

TEST_P(GptDecoderFamilyGpu, GreedyDecodeMatchesTheReferenceStepByStep) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape(GetParam());
  const int seq = 32, steps = 12;
  gpu::Stream s;
  GptDecoder d(m, 2, seq, s.get());
  const std::vector<float> w = spread_weights(m, seq, 7);
  d.load(w);
  const std::vector<std::vector<int>> prompts = {{3, 141, 59, 26, 5}, {500, 1, 2, 77, 77, 77, 8, 300, 42}};
  const Decoded got = decode(d, prompts, steps, false);
  const std::vector<double> wd(w.begin(), w.end());
  const double logit_tol = 0.08, choice_tol = 0.05;
  int clear_choices = 0;
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    const std::vector<int>& sq = got.sequences[b];
    ASSERT_EQ(sq.size(), prompts[b].size() + 1 + steps) << "slot " << b;
    EXPECT_TRUE(std::equal(prompts[b].begin(), prompts[b].end(), sq.begin())) << "slot " << b << "'s prompt";
    const int T = static_cast<int>(sq.size());
    const std::vector<double> ref = reference_logits(m, seq, 1, T, wd, sq);
    for (int k = 0; k <= steps; ++k) {
      const int pos = static_cast<int>(prompts[b].size()) - 1 + k;  // the position step k chose from
      const double* r = &ref[static_cast<std::size_t>(pos) * m.padded_vocab];
      const std::vector<float>& g = got.logits[static_cast<std::size_t>(k)][b];
      ASSERT_EQ(g.size(), static_cast<std::size_t>(m.vocab));
      double worst = 0, spread = 0, mean = 0;
      for (int v = 0; v < m.vocab; ++v) mean += r[v] / m.vocab;
      for (int v = 0; v < m.vocab; ++v) {
        worst = std::max(worst, std::abs(g[static_cast<std::size_t>(v)] - r[v]));
        spread += (r[v] - mean) * (r[v] - mean) / m.vocab;
      }
      EXPECT_LT(worst, logit_tol) << "slot " << b << " step " << k << " (logits' spread " << std::sqrt(spread) << ")";
      const int chosen = sq[static_cast<std::size_t>(pos) + 1];
      const int best = greedy_token(m, r);
      EXPECT_GE(r[chosen], r[best] - choice_tol) << "slot " << b << " step " << k << ": chose " << chosen << " ("
                                                 << r[chosen] << "), the reference " << best << " (" << r[best] << ")";
      clear_choices += chosen == best;
    }
  }
  // Near-ties are rare with these weights: most choices are the reference's exactly.
  EXPECT_GE(clear_choices, 20) << "of " << 2 * (steps + 1);
}

// Each token a decoder chose after `prompt` tokens of `sequence` against the fp64 reference's
// logits at its position: the reference's greedy choice, or within `tol` of its best logit.
// Returns how many were exactly the reference's choice.
int expect_greedy(const ModelShape& m, int seq, const std::vector<double>& w, const std::vector<int>& sequence,
                  std::size_t prompt, double tol, const std::string& what) {
  const int T = static_cast<int>(sequence.size());
  const std::vector<double> ref = reference_logits(m, seq, 1, T, w, sequence);
  int exact = 0;
  for (std::size_t pos = prompt - 1; pos + 1 < sequence.size(); ++pos) {
    const double* r = &ref[pos * static_cast<std::size_t>(m.padded_vocab)];
    const int chosen = sequence[pos + 1], best = greedy_token(m, r);
    EXPECT_GE(r[chosen], r[best] - tol) << what << " position " << pos << ": chose " << chosen << ", the reference "
                                        << best;
    exact += chosen == best;
  }
  return exact;
}

// Continuous batching: sequences admitted at different iterations, decoding beside each other and
// beside new prompts (one forward pass an iteration), and a slot taken again by a new prompt once
// its sequence is done: every sequence is decoded as the reference decodes it alone.
TEST_P(GptDecoderFamilyGpu, ContinuousBatchingDecodesEachSequenceAsAlone) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape(GetParam());
  const int seq = 48;
  gpu::Stream s;
  GptDecoder d(m, 3, seq, s.get());
  const std::vector<float> w = spread_weights(m, seq, 13);
  d.load(w);
  const std::vector<double> wd(w.begin(), w.end());
  const std::vector<int> a = {5, 6, 7, 8}, b = {100, 200, 300, 400, 500, 1, 2}, c = {42}, e = {9, 9, 9, 9, 9, 9};
  d.iterate({{0, a}}, {});
  d.iterate({{2, c}}, {0});
  d.iterate({{1, b}}, {0, 2});
  for (int i = 0; i < 8; ++i) d.iterate({}, {0, 1, 2});
  const std::vector<int> first = d.sequences()[0];
  ASSERT_EQ(first.size(), a.size() + 11);  // its prefill's token and 10 decoded
  d.iterate({{0, e}}, {2, 1});             // slot 0 again, from a new prompt; order of the list free
  for (int i = 0; i < 5; ++i) d.iterate({}, {1, 0, 2});
  const std::vector<std::vector<int>> now = d.sequences();
  ASSERT_EQ(now[0].size(), e.size() + 6);
  ASSERT_EQ(now[1].size(), b.size() + 15);
  ASSERT_EQ(now[2].size(), c.size() + 16);
  EXPECT_TRUE(std::equal(e.begin(), e.end(), now[0].begin()));
  int exact = expect_greedy(m, seq, wd, first, a.size(), 0.05, "first sequence of slot 0");
  exact += expect_greedy(m, seq, wd, now[0], e.size(), 0.05, "second sequence of slot 0");
  exact += expect_greedy(m, seq, wd, now[1], b.size(), 0.05, "slot 1");
  exact += expect_greedy(m, seq, wd, now[2], c.size(), 0.05, "slot 2");
  EXPECT_GE(exact, 40) << "of 48 choices";
  // What an iteration refuses, before it runs anything.
  EXPECT_THROW(d.iterate({{1, {1, 2}}}, {1}), Error) << "a slot twice";
  EXPECT_THROW(d.iterate({}, {3}), Error) << "no slot 3";
  GptDecoder fresh(m, 2, seq, s.get());
  EXPECT_THROW(fresh.iterate({}, {0}), Error) << "slot 0 holds nothing to continue";
  EXPECT_THROW(fresh.step(), Error) << "a step decodes every slot, and none holds a sequence";
  EXPECT_THROW(d.iterate({}, {}), Error) << "nothing to run";
  EXPECT_EQ(d.sequences()[1].size(), b.size() + 15) << "a refused iteration changes nothing";
}

INSTANTIATE_TEST_SUITE_P(BothFamilies, GptDecoderFamilyGpu, ::testing::Values("gpt2-tiny", "llama-tiny"));

// A decode step replayed as one CUDA graph makes the same tokens and logits as the step launched
// kernel by kernel, and a prefill starts the slots afresh.
TEST(GptDecoderGpu, GraphedStepsDecodeAsEagerStepsDo) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-tiny");
  gpu::Stream s;
  GptDecoder d(m, 3, 64, s.get());
  d.load(spread_weights(m, 64, 11));
  const std::vector<std::vector<int>> prompts = {{1, 2, 3}, {9}, {400, 401, 402, 403, 404, 405, 406, 407}};
  const Decoded eager = decode(d, prompts, 20, false);
  const Decoded graphed = decode(d, prompts, 20, true);
  EXPECT_EQ(eager.sequences, graphed.sequences);
  EXPECT_EQ(eager.logits, graphed.logits);
  EXPECT_THROW(d.prefill({{1}, {2}}), Error) << "3 slots take 3 prompts";
  EXPECT_THROW(d.prefill({{1}, {2}, {512}}), Error) << "a token outside the vocabulary";
  EXPECT_THROW(d.prefill({{1}, {2}, std::vector<int>(64, 3)}), Error) << "a prompt as long as seq leaves no room";
  // A profiled step is a step too, and times every group of kernels.
  d.prefill(prompts);
  const Json profile = d.profile_step();
  for (const char* group : {"embedding", "attention", "gemm_qkv", "gemm_mlp_down", "gemm_head", "greedy"})
    EXPECT_GT(profile.value(group, 0.0), 0.0) << group;
  EXPECT_EQ(d.sequences()[1].size(), 3u) << "the prompt, the prefill's token and the profiled step's";
}

// The decoder initialised from a seed holds the weights GptModel initialises from that seed, and
// loads a model's parameters as they are: both decode the same tokens.
TEST(GptDecoderGpu, InitialisesAndLoadsTheTrainingModelsWeights) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-tiny");
  const int seq = 64;
  gpu::Stream s;
  GptModel model(m, 1, seq, 21, s.get());
  // The model's flat buffer (its own order and padding) in parameter_layout's order, by name.
  const std::vector<float> values = in_layout_order(model.params(), model.layout(), parameter_layout(m, seq));
  GptDecoder loaded(m, 2, seq, s.get()), seeded(m, 2, seq, s.get());
  loaded.load(values);
  seeded.init(21);
  const std::vector<std::vector<int>> prompts = {{10, 20, 30}, {7, 7}};
  const Decoded a = decode(loaded, prompts, 8, false), b = decode(seeded, prompts, 8, false);
  EXPECT_EQ(a.sequences, b.sequences);
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_THROW(loaded.load(std::vector<float>(values.size() - 1)), Error);
}

// The infer workload's engine from a checkpoint of a model of bytes (as `save` writes after
// training on text): its check passes (cached choices against the same prefixes run afresh) and
// shows the text; a checkpoint of another model, or too short a position table, is refused by name.
TEST(GptDecoderGpu, EngineFromACheckpointChecksAndWritesText) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  ModelShape m = model_shape("gpt2-tiny");
  m.vocab = m.padded_vocab = 256;
  const int seq = 64;
  Checkpoint c;
  c.shape = m;
  c.seq = seq;
  c.values = spread_weights(m, seq, 17);
  const std::string path = ::testing::TempDir() + "decoder-engine.ckpt";
  write_checkpoint(path, c);
  infer::TokenEngineRequest r;
  r.model = "gpt2-tiny";
  r.checkpoint = path;
  r.slots = 4;
  r.longest_prompt = 16;
  r.max_sequence = 48;
  const std::unique_ptr<infer::TokenEngine> engine = infer::make_gpt_engine(r);
  const infer::TokenEngine::Check check = engine->check(16);
  EXPECT_EQ(check.wrong, 0) << check.details.dump();
  EXPECT_EQ(check.rows, 32);
  ASSERT_TRUE(check.details.contains("text"));
  EXPECT_EQ(check.details["text"].get<std::string>().rfind("The meaning of life is", 0), 0u) << check.details;
  EXPECT_EQ(engine->describe()["weights"], path);
  // An iteration as the token loop gives one: two admitted, then both decode.
  infer::Iteration first;
  first.admit = {{0, 0, {8, 4}}, {1, 1, {16, 4}}};
  engine->run(first);
  infer::Iteration next;
  next.decode = {0, 1};
  engine->run(next);
  // Every slot decoding, none admitted: the engine runs the step as one CUDA graph.
  infer::Iteration rest;
  rest.admit = {{2, 2, {4, 4}}, {3, 3, {4, 4}}};
  rest.decode = {0, 1};
  engine->run(rest);
  infer::Iteration full;
  full.decode = {3, 2, 1, 0};
  for (int i = 0; i < 3; ++i) engine->run(full);
  r.model = "gpt2-124m";
  EXPECT_THROW(infer::make_gpt_engine(r), Error) << "the checkpoint holds gpt2-tiny";
  r.model = "gpt2-tiny";
  r.max_sequence = 65;
  EXPECT_THROW(infer::make_gpt_engine(r), Error) << "its position table has 64 rows";
  std::remove(path.c_str());
}

#endif
