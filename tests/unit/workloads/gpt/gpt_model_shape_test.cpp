// The gpt workload's model shapes and parameter layouts (gpt_config.hpp): the catalogue's GPT-2
// and Llama shapes, their parameter counts and FLOPs, the layout's order, and a model buffer put
// in that order.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpt/gpt_config.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

TEST(GptConfig, Gpt2Shapes) {
  const ModelShape s = model_shape("gpt2-124m");
  EXPECT_EQ(s.layers, 12);
  EXPECT_EQ(s.width, 768);
  EXPECT_EQ(s.heads, 12);
  EXPECT_EQ(s.head_dim(), 64);
  EXPECT_EQ(s.mlp, 3072);
  EXPECT_EQ(s.vocab, 50257);
  EXPECT_EQ(s.padded_vocab, 50304);
  EXPECT_TRUE(s.tied());
  EXPECT_EQ(model_shape("gpt2-350m").layers, 24);
  EXPECT_EQ(model_shape("gpt2-774m").width, 1280);
  const ModelShape xl = model_shape("gpt2-1.5b");
  EXPECT_EQ(xl.name, "gpt2-1558m");
  EXPECT_EQ(xl.layers, 48);
  EXPECT_EQ(xl.heads, 25);
  EXPECT_EQ(xl.head_dim(), 64);
}

TEST(GptConfig, LlamaShapeAndLayers) {
  const ModelShape l = model_shape("llama3-8b", 4);
  EXPECT_EQ(l.family, Family::kLlama);
  EXPECT_EQ(l.layers, 4);
  EXPECT_EQ(l.width, 4096);
  EXPECT_EQ(l.kv_heads, 8);
  EXPECT_EQ(l.mlp, 14336);
  EXPECT_EQ(l.padded_vocab, 128256);
  EXPECT_FALSE(l.tied());
  EXPECT_EQ(model_shape("llama3-8b").layers, 32);
}

// The counts PyTorch's GPT-2 (padded vocabulary, positions = seq)
// reports: sum of numel over parameters().
TEST(GptConfig, LlamaTinyShape) {
  const ModelShape t = model_shape("llama-tiny");
  EXPECT_EQ(t.family, Family::kLlama);
  EXPECT_EQ(t.layers, 2);
  EXPECT_EQ(t.width, 64);
  EXPECT_EQ(t.heads, 4);
  EXPECT_EQ(t.kv_heads, 2);
  EXPECT_EQ(t.head_dim(), 16);
  EXPECT_EQ(t.mlp, 172);
  EXPECT_EQ(t.padded_vocab, 512);
  // wte, 2 x (ln1, qkv, proj, ln2, gate, up, down), ln_f, head; gate right before up (one GEMM).
  const std::vector<Tensor> l = parameter_layout(t, 32);
  ASSERT_EQ(l.size(), 1u + 14u + 2u);
  EXPECT_EQ(l[2].name, "h.0.qkv.weight");
  EXPECT_EQ(l[2].rows, (4 + 2 * 2) * 16);
  EXPECT_EQ(l[5].name, "h.0.gate.weight");
  EXPECT_EQ(l[6].name, "h.0.up.weight");
  EXPECT_EQ(l[6].offset, l[5].offset + 172 * 64);
  EXPECT_EQ(l.back().name, "head.weight");
}

TEST(GptConfig, ParameterCounts) {
  EXPECT_EQ(parameter_count(model_shape("gpt2-124m"), 1024), 124475904);
  EXPECT_EQ(parameter_count_without_positions(model_shape("gpt2-124m"), 1024), 124475904 - 1024 * 768);
  EXPECT_EQ(parameter_count(model_shape("gpt2-350m"), 1024), 354871296);
  EXPECT_EQ(parameter_count(model_shape("gpt2-774m"), 1024), 774090240);
  EXPECT_EQ(parameter_count(model_shape("gpt2-1558m"), 1024), 1557686400);
  // Llama 3 8B: 8,030,261,248 parameters (Meta's model card count).
  EXPECT_EQ(parameter_count(model_shape("llama3-8b"), 8192), 8030261248LL);
}

TEST(GptConfig, LayoutIsContiguous) {
  const std::vector<Tensor> t = parameter_layout(model_shape("gpt2-tiny"), 32);
  long long at = 0;
  for (const Tensor& x : t) {
    EXPECT_EQ(x.offset, at) << x.name;
    at += x.numel();
  }
  EXPECT_EQ(t.front().name, "wte");
  EXPECT_EQ(t[1].name, "wpe");
  EXPECT_EQ(t[1].rows, 32);
  EXPECT_EQ(t.back().name, "ln_f.bias");
  // 2 blocks of 12 tensors each, embeddings, final norm.
  EXPECT_EQ(t.size(), 2u + 24u + 2u);
}

TEST(GptConfig, FlopFormula) {
  const ModelShape s = model_shape("gpt2-124m");
  const double n = 124475904.0 - 1024 * 768;
  EXPECT_DOUBLE_EQ(flops_per_token(s, 1024), 6 * n + 12.0 * 12 * 768 * 1024);
  // 1.5B at seq 1024: 6 x 1,556,048,000 + 12 x 48 x 1600 x 1024.
  EXPECT_DOUBLE_EQ(flops_per_token(model_shape("gpt2-1558m"), 1024), 6.0 * 1556048000 + 12.0 * 48 * 1600 * 1024);
  // MFU: 494k tokens/s of 124M on one H200 is torch.compile's 42.7% (the figure its script printed).
  const double peak = dense_bf16_peak(9, 0);
  EXPECT_DOUBLE_EQ(peak, 989.4e12);
  EXPECT_NEAR(mfu_percent(494e3, flops_per_token(s, 1024), peak), 42.7, 0.1);
  EXPECT_DOUBLE_EQ(dense_bf16_peak(8, 0), 312e12);
  EXPECT_EQ(dense_bf16_peak(12, 0), 0);
  EXPECT_EQ(mfu_percent(1, 1, 0), 0);
}

// Llama: 6 x the parameters a token multiplies with. Per 8B-shaped block: Q 4096 x 4096, K and V
// 1024 x 4096 each (8 KV heads of 128), the output 4096 x 4096, SwiGLU's gate, up and down
// 3 x 14336 x 4096, two RMSNorm weights; then the final norm and the untied head 128256 x 4096.
// The input embedding is a lookup: not counted.
TEST(GptConfig, LlamaFlopFormula) {
  const double block = 4096.0 * 4096 + 2.0 * 1024 * 4096 + 4096.0 * 4096 + 3.0 * 14336 * 4096 + 2 * 4096;
  const double head = 128256.0 * 4096 + 4096;
  EXPECT_EQ(block, 218112000.0);
  for (int layers : {1, 4, 32}) {
    const ModelShape s = model_shape("llama3-8b", layers);
    EXPECT_EQ(matmul_parameter_count(s, 4096), static_cast<long long>(layers * block + head));
    EXPECT_EQ(matmul_parameter_count(s, 4096), parameter_count(s, 4096) - 128256LL * 4096);
    for (int seq : {2048, 4096})
      EXPECT_DOUBLE_EQ(flops_per_token(s, seq), 6 * (layers * block + head) + 12.0 * layers * 4096 * seq);
  }
  // GPT-2's tied embedding is its head: counted once, as before.
  EXPECT_EQ(matmul_parameter_count(model_shape("gpt2-124m"), 1024), 124475904 - 1024 * 768);
}

// A model buffer in its own order and padding (GptModel's buckets) put in the layout's order by
// name, as a checkpoint and the decoder want it; as it is when it already is the layout.
TEST(GptConfig, InLayoutOrderByName) {
  const ModelShape m = model_shape("gpt2-tiny");
  const std::vector<Tensor> layout = parameter_layout(m, 32);
  std::vector<Tensor> held = layout;
  std::reverse(held.begin(), held.end());  // another order, 8 elements of padding after each
  long long at = 0;
  for (Tensor& t : held) {
    t.offset = at;
    at += t.numel() + 8;
  }
  std::vector<float> flat(static_cast<std::size_t>(at), -1.f);
  for (const Tensor& t : held)
    for (long long i = 0; i < t.numel(); ++i)
      flat[static_cast<std::size_t>(t.offset + i)] = static_cast<float>(t.offset + i);
  const std::vector<float> out = in_layout_order(flat, held, layout);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(layout.back().offset + layout.back().numel()));
  for (const Tensor& t : layout) {
    const auto h = std::find_if(held.begin(), held.end(), [&](const Tensor& x) { return x.name == t.name; });
    EXPECT_EQ(out[static_cast<std::size_t>(t.offset)], static_cast<float>(h->offset)) << t.name;
    EXPECT_EQ(out[static_cast<std::size_t>(t.offset + t.numel() - 1)], static_cast<float>(h->offset + t.numel() - 1))
        << t.name;
  }
  EXPECT_EQ(in_layout_order(out, layout, layout), out) << "already the layout: as it is";
  // For a decoder of shorter sequences than the training's: the position table's first rows, the
  // other tensors whole.
  const std::vector<Tensor> shorter = parameter_layout(m, 16);
  ASSERT_EQ(shorter.size(), layout.size());
  const std::vector<float> cut = in_layout_order(out, layout, shorter);
  ASSERT_EQ(cut.size(), static_cast<std::size_t>(shorter.back().offset + shorter.back().numel()));
  int smaller = 0;
  for (std::size_t i = 0; i < shorter.size(); ++i) {
    smaller += shorter[i].numel() < layout[i].numel();
    for (const long long k : {0LL, shorter[i].numel() - 1})
      EXPECT_EQ(cut[static_cast<std::size_t>(shorter[i].offset + k)],
                out[static_cast<std::size_t>(layout[i].offset + k)])
          << shorter[i].name;
  }
  EXPECT_EQ(smaller, 1) << "the position table alone";
  std::vector<Tensor> missing = layout;
  missing.pop_back();
  EXPECT_THROW(in_layout_order(out, missing, layout), scalebench::Error);
}
