#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "workloads/gpt/llama_kernels.cuh"
#include "workloads/gpt/step_core.hpp"

// The Llama-style step: RMSNorm, rotary positions (Llama 3's theta 500000, half-split layout),
// grouped-query attention through cuDNN, SwiGLU, no biases, untied output head. On a tp rank
// (Megatron, as gpt2_step.cpp): QKV by heads (its query heads and its KV heads), gate and up by
// hidden columns, attention-out and down by input columns, their partial outputs summed over the
// tp ranks; norms, embedding and head replicated. With sequence parallelism as gpt2_step.cpp: the
// norms, the residual stream and the head on this rank's token rows; rotary turns the gathered
// rows of QKV, so every row keeps its position.
//
// Why: its passes mirror gpt2_step.cpp's so that the two families share StepCore whole. Only the
// fused attention is offered, since grouped-query attention is what cuDNN's graph does and the
// naive path does not. Rotary is turned in place in the QKV projection's rows, which attention
// then reads where they are; gate and up are one GEMM, so that one kernel makes SwiGLU of both.
namespace scalebench::gpt {

namespace {

class LlamaStep final : public StepCore {
 public:
  LlamaStep(const ModelShape& shape, int b, int t, cudaStream_t stream, Attention att, const Parallel& par)
      : StepCore(shape, b, t, stream, att, par) {
    if (att != Attention::kCudnn)
      throw Error("attention: naive does not do grouped-query attention; " + m.name + " runs with cudnn");
    if (mlp_l % 2 != 0)
      throw Error("tp: " + std::to_string(par.at.tp) + " leaves an odd MLP width (" + std::to_string(mlp_l) +
                  ") per rank; SwiGLU needs it even");
  }

  // Pipeline stages are built for GPT-2 (StepCore refuses pp > 1 for Llama before this is reached).
  bf16* pipe_buffer(Carries, bool, int, int) override { throw Error("pp: pipeline stages are built for GPT-2 only"); }

  void forward(int micro, int count) override {
    micro_count = count;
    const int C = m.width, rows = static_cast<int>(rows_l);
    embedding_forward(res[0], tokens, p(0), nullptr, rows_l, first_row, T, C, s);
    mark("fwd.embedding");
    for (int l = 0; l < m.layers; ++l) block_forward(l, false);
    rmsnorm_forward(lnf, lnf_rstd, res[m.layers], p(lnf_w()), rows, C, s);
    mark("fwd.rmsnorm");
    head_forward(lnf, p(head()));
    mark("fwd.gemm_head");
    loss_forward(micro, count);
    mark("fwd.cross_entropy");
  }

  // Block l from its input res[l]. `again`: the backward pass's recomputation, up to down's input
  // (the block's output is kept), charged to bwd.recompute in the profile.
  void block_forward(int l, bool again) {
    const int C = m.width, rows = static_cast<int>(rows_l);
    auto mark_fwd = [&](const char* name) {
      if (!again) mark(name);
    };
    rmsnorm_forward(ln1[l], ln1_rstd[l], res[l], p(blk(l, 0)), rows, C, s);
    mark_fwd("fwd.rmsnorm");
    const bf16* x1 = all_rows(ln1[l]);
    mark_fwd("fwd.tp_all_gather");
    block_linear(fp8_site(l, 0), qkv[l], x1, p(blk(l, 1)), nullptr, C, qkv_width());
    mark_fwd("fwd.gemm_qkv");
    rotary(qkv[l], rope, BT, T, heads_l + kv_l, m.head_dim(), qkv_width(), false, s);
    mark_fwd("fwd.rotary");
    sdpa_fwd->run(cudnn->get(), qkv[l], k_of(qkv[l]), v_of(qkv[l]), atty[l], attn_stats[l], sdpa_workspace.get());
    mark_fwd("fwd.attention");
    block_linear(fp8_site(l, 1), full_rows(r2[l]), atty[l], p(blk(l, 2)), nullptr, attn_width(), C, once(res[l]));
    mark_fwd("fwd.gemm_proj");
    sum_partials(r2[l]);
    mark_fwd(fwd_sum_mark());
    add_once(r2[l], res[l], nullptr);
    mark_fwd("fwd.residual");
    rmsnorm_forward(ln2[l], ln2_rstd[l], r2[l], p(blk(l, 3)), rows, C, s);
    mark_fwd("fwd.rmsnorm");
    const bf16* x2 = all_rows(ln2[l]);
    mark_fwd("fwd.tp_all_gather");
    // Gate and up in one GEMM: their weights lie one after the other, a [2 x mlp, width] matrix.
    block_linear(fp8_site(l, 2), gu[l], x2, p(blk(l, 4)), nullptr, C, 2 * mlp_l);
    mark_fwd("fwd.gemm_mlp");
    swiglu_forward(hid[l], gu[l], BT, mlp_l, s);
    mark_fwd("fwd.swiglu");
    if (again) {
      mark("bwd.recompute");
      return;
    }
    block_linear(fp8_site(l, 3), full_rows(res[l + 1]), hid[l], p(blk(l, 6)), nullptr, mlp_l, C, once(r2[l]));
    mark("fwd.gemm_mlp");
    sum_partials(res[l + 1]);
    mark(fwd_sum_mark());
    add_once(res[l + 1], r2[l], nullptr);
    mark("fwd.residual");
  }

  void backward(int micro) override {
    const bool acc = micro > 0;
    const int C = m.width, L = m.layers, R = qkv_width();
    // logits now hold d loss / d logits.
    head_backward(dtmp, g(head()), lnf, p(head()), acc);
    mark("bwd.gemm_head");
    CUDA_CHECK(cudaMemsetAsync(dres, 0, sizeof(bf16) * rows_l * C, s));
    norm_backward(dtmp, res[L], lnf_rstd, lnf_w(), acc);
    mark("bwd.rmsnorm");
    for (int l = L - 1; l >= 0; --l) {
      // The last block's activations are still in the shared buffers from the forward pass.
      if (recompute && l < L - 1) block_forward(l, true);
      // MLP: res[l+1] = r2 + down(swiglu(gate_up(ln2(r2)))).
      const bf16* dy = all_rows(dres);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 3), g(blk(l, 6)), nullptr, dy, hid[l], mlp_l, C, acc);
      block_input_grad(fp8_site(l, 3), dhid, dy, p(blk(l, 6)), mlp_l, C);
      mark("bwd.gemm_mlp");
      swiglu_backward(dgu, dhid, gu[l], BT, mlp_l, s);
      mark("bwd.swiglu");
      const bf16* x2 = all_rows(ln2[l]);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 2), g(blk(l, 4)), nullptr, dgu, x2, C, 2 * mlp_l, acc);
      block_input_grad(fp8_site(l, 2), full_rows(dtmp), dgu, p(blk(l, 4)), C, 2 * mlp_l);
      mark("bwd.gemm_mlp");
      sum_partials(dtmp);
      mark(bwd_sum_mark());
      norm_backward(dtmp, r2[l], ln2_rstd[l], blk(l, 3), acc);
      mark("bwd.rmsnorm");
      // Attention: r2 = res[l] + proj(attn(rotary(qkv(ln1(res[l]))))).
      dy = all_rows(dres);
      mark("bwd.tp_all_gather");
      bf16* datty = full_rows(dtmp);
      block_weight_grad(fp8_site(l, 1), g(blk(l, 2)), nullptr, dy, atty[l], attn_width(), C, acc);
      block_input_grad(fp8_site(l, 1), datty, dy, p(blk(l, 2)), attn_width(), C);
      mark("bwd.gemm_proj");
      sdpa_bwd->run(cudnn->get(), qkv[l], k_of(qkv[l]), v_of(qkv[l]), atty[l], datty, attn_stats[l], dqkv, k_of(dqkv),
                    v_of(dqkv), sdpa_workspace.get());
      mark("bwd.attention");
      rotary(dqkv, rope, BT, T, heads_l + kv_l, m.head_dim(), R, true, s);
      mark("bwd.rotary");
      const bf16* x1 = all_rows(ln1[l]);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 0), g(blk(l, 1)), nullptr, dqkv, x1, C, R, acc);
      block_input_grad(fp8_site(l, 0), full_rows(dtmp), dqkv, p(blk(l, 1)), C, R);
      mark("bwd.gemm_qkv");
      sum_partials(dtmp);
      mark(bwd_sum_mark());
      norm_backward(dtmp, res[l], ln1_rstd[l], blk(l, 0), acc);
      mark("bwd.rmsnorm");
      layer_done(l, micro);
    }
    // The untied embedding's gradient is only the batch's rows: zero it, then add them.
    if (!acc) CUDA_CHECK(cudaMemsetAsync(g(0), 0, sizeof(bf16) * tensors[0].numel(), s));
    embedding_backward(g(0), nullptr, dres, tokens, rows_l, first_row, T, C, acc, s);
    mark("bwd.embedding");
    layer_done(-1, micro);
  }

 protected:
  void plan_activations(Planner& a) override {
    const long long C = m.width, L = m.layers, R = qkv_width(), H = mlp_l;
    res.assign(L + 1, nullptr);
    for (auto* vec : {&ln1, &qkv, &atty, &r2, &ln2, &gu, &hid}) vec->assign(L, nullptr);
    for (auto* vec : {&ln1_rstd, &ln2_rstd, &attn_stats}) vec->assign(L, nullptr);
    // The residual stream and the norms: this rank's rows only with sequence parallelism.
    const long long Rl = rows_l;
    res[0] = a.bf(Rl * C);
    for (long long l = 0; l < L; ++l) {
      res[l + 1] = a.bf(Rl * C);
      if (recompute && l > 0) continue;  // one block's buffers, shared by all (below)
      ln1[l] = a.bf(Rl * C);
      ln1_rstd[l] = a.f32(Rl);
      qkv[l] = a.bf(BT * R);
      attn_stats[l] = a.f32(B * static_cast<long long>(heads_l) * T);
      atty[l] = a.bf(BT * attn_width());
      r2[l] = a.bf(Rl * C);
      ln2[l] = a.bf(Rl * C);
      ln2_rstd[l] = a.f32(Rl);
      gu[l] = a.bf(BT * 2 * H);
      hid[l] = a.bf(BT * H);
    }
    if (recompute) {
      for (auto* vec : {&ln1, &qkv, &atty, &r2, &ln2, &gu, &hid}) std::fill(vec->begin(), vec->end(), vec->front());
      for (auto* vec : {&ln1_rstd, &ln2_rstd, &attn_stats}) std::fill(vec->begin(), vec->end(), vec->front());
    }
    lnf = a.bf(Rl * C);
    lnf_rstd = a.f32(Rl);
    dres = a.bf(Rl * C);
    dtmp = a.bf(Rl * C);
    dhid = a.bf(BT * H);
    dgu = a.bf(BT * 2 * H);
    dqkv = a.bf(BT * R);
    rope = reinterpret_cast<float2*>(a.f32(static_cast<long long>(T) * m.head_dim()));
  }

  std::vector<Fp8Shape> fp8_sites() const override {
    const int C = m.width;
    std::vector<Fp8Shape> sites;
    for (int l = 0; l < m.layers; ++l)
      sites.insert(sites.end(), {{C, qkv_width()}, {attn_width(), C}, {C, 2 * mlp_l}, {mlp_l, C}});
    return sites;
  }
  void init_tables() override { rotary_table(rope, T, m.head_dim(), kRopeTheta, s); }

 private:
  // Activations kept for backward, per layer: the residual stream, norms' outputs and 1/rms, the
  // QKV projection (Q and K turned), attention's output and statistics, gate|up and SwiGLU's output.
  std::vector<bf16*> res, ln1, qkv, atty, r2, ln2, gu, hid;
  std::vector<float*> ln1_rstd, ln2_rstd, attn_stats;
  bf16* lnf = nullptr;
  float* lnf_rstd = nullptr;
  // Scratch.
  bf16 *dres = nullptr, *dtmp = nullptr, *dhid = nullptr, *dgu = nullptr, *dqkv = nullptr;
  float2* rope = nullptr;  // [T, head_dim / 2] (cos, sin)

  // Index of block l's tensor `j` (0 ln1, 1 qkv, 2 proj, 3 ln2, 4 gate, 5 up, 6 down); 0 is the
  // embedding, then the blocks, then ln_f and the head.
  std::size_t blk(int l, int j) const { return 1 + static_cast<std::size_t>(l) * 7 + static_cast<std::size_t>(j); }
  std::size_t lnf_w() const { return 1 + static_cast<std::size_t>(m.layers) * 7; }
  std::size_t head() const { return lnf_w() + 1; }
  // This tp rank's query and KV heads (all with tp 1).
  int qkv_width() const { return (heads_l + 2 * kv_l) * m.head_dim(); }
  // K and V inside a row of the QKV projection (or its gradient): after the query heads.
  bf16* k_of(bf16* x) const { return x + static_cast<long long>(heads_l) * m.head_dim(); }
  bf16* v_of(bf16* x) const { return x + static_cast<long long>(heads_l + kv_l) * m.head_dim(); }

  // dres += RMSNorm's input gradient on this rank's rows; the weight's gradient stored (or added).
  void norm_backward(const bf16* dout, const bf16* x, const float* rstd, std::size_t w_index, bool acc) {
    const int C = m.width;
    rmsnorm_backward(dres, g(w_index), acc, norm_partials, dout, x, rstd, p(w_index), static_cast<int>(rows_l), C, s);
  }
};

}  // namespace

std::unique_ptr<StepCore> make_llama_step(const ModelShape& m, int B, int T, cudaStream_t s, Attention attention,
                                          const Parallel& par) {
  return std::make_unique<LlamaStep>(m, B, T, s, attention, par);
}

}  // namespace scalebench::gpt
