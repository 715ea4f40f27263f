#include <algorithm>
#include <cmath>

#include "workloads/gpt/step_core.hpp"

// The GPT-2 step: learned positions, pre-LayerNorm, GELU MLP, biases, tied head. On a tp rank
// (Megatron): QKV and MLP-up hold this rank's heads and hidden columns, attention-out and MLP-down
// the matching input columns; their partial outputs are summed over the tp ranks (with the bias and
// the residual added by rank 0 only), and so are the input gradients of QKV and MLP-up. Norms,
// embeddings and the head are replicated. With sequence parallelism they run on this rank's token
// rows: the norms' outputs are all-gathered before QKV and MLP-up, the partial sums are
// reduce-scattered (the bias and residual then added to the rank's rows), and in backward the
// residual stream's gradient is all-gathered and the input gradients reduce-scattered.
//
// Why it is written out pass by pass, with a buffer per activation and layer: the calls are the
// kernels in their order (what the profile's marks name), every buffer comes from the step's one
// allocation (with recompute: true one block's buffers serve all), and bias, GELU and residual
// ride in the GEMMs' epilogues. The naive attention path stays beside cuDNN's fused one because
// it is the reference the fused one's loss and gradients are compared with (docs/gpt.md).
namespace scalebench::gpt {

namespace {

class Gpt2Step final : public StepCore {
 public:
  using StepCore::StepCore;

  // Activations kept for backward, per layer.
  std::vector<bf16*> res, r2, ln1, ln2, qkv, q, k, v, probs, atty, fch, fchg;
  std::vector<float*> ln1_mean, ln1_rstd, ln2_mean, ln2_rstd, attn_stats;
  bf16* lnf = nullptr;
  float *lnf_mean = nullptr, *lnf_rstd = nullptr;
  // The final norm's output and statistics per slot of the head's chunk (one but under the
  // interleaved schedule with m = pp, which runs every forward first): lnf and its two above.
  struct FinalNorm {
    bf16* y = nullptr;
    float *mean = nullptr, *rstd = nullptr;
  };
  std::vector<FinalNorm> final_norms;
  // Scratch.
  bf16 *yh = nullptr, *dres = nullptr, *dtmp = nullptr, *dfch = nullptr, *dqkv = nullptr, *dq = nullptr, *dk = nullptr,
       *dv = nullptr, *dyh = nullptr, *dprobs = nullptr;

  // Index of block l's tensor `j` (0 ln1.w, 1 ln1.b, 2 qkv.w, 3 qkv.b, 4 proj.w, 5 proj.b, 6 ln2.w,
  // 7 ln2.b, 8 up.w, 9 up.b, 10 down.w, 11 down.b); 0 wte, 1 wpe, then blocks, then ln_f w, b. A
  // pipeline stage holds the embeddings only if first, its blocks (of all its chunks), ln_f only
  // if last, and then the head: wte itself, or its copy after ln_f (stage_layout).
  std::size_t block_base() const { return holds_embedding() ? 2 : 0; }
  std::size_t blk(int l, int j) const {
    return block_base() + static_cast<std::size_t>(block_position[static_cast<std::size_t>(l)]) * 12 +
           static_cast<std::size_t>(j);
  }
  std::size_t lnf_w() const { return block_base() + static_cast<std::size_t>(held_blocks) * 12; }
  std::size_t head_w() const { return holds_embedding() ? 0 : lnf_w() + 2; }

  // The activations of each chunk's slots (pipeline_slots, chunk_slots), swapped into the vectors
  // above by use_slot: a chunk's entries only (its blocks' layers, res up to its output).
  std::vector<std::vector<bf16*>*> bf_acts() {
    return {&res, &r2, &ln1, &ln2, &qkv, &q, &k, &v, &probs, &atty, &fch, &fchg};
  }
  std::vector<std::vector<float*>*> f32_acts() { return {&ln1_mean, &ln1_rstd, &ln2_mean, &ln2_rstd, &attn_stats}; }
  struct Slot {
    std::vector<std::vector<bf16*>> bf;
    std::vector<std::vector<float*>> f32;
  };
  std::vector<std::vector<Slot>> slot_acts;  // [chunk][slot]
  const Slot& slot_of(int c, int micro) const {
    const std::vector<Slot>& x = slot_acts[static_cast<std::size_t>(c)];
    return x[static_cast<std::size_t>(micro) % x.size()];
  }
  void use_slot(int micro) {
    if (slot_acts.size() == 1 && slot_acts[0].size() < 2) return;
    const Slot& x = slot_of(chunk, micro);
    const auto b = bf_acts();
    const auto f = f32_acts();
    const auto F = static_cast<std::ptrdiff_t>(stage.first), E = static_cast<std::ptrdiff_t>(stage.last);
    for (std::size_t i = 0; i < b.size(); ++i)
      std::copy(x.bf[i].begin() + F, x.bf[i].begin() + E + (i == 0 ? 1 : 0), b[i]->begin() + F);  // res: E too
    for (std::size_t i = 0; i < f.size(); ++i) std::copy(x.f32[i].begin() + F, x.f32[i].begin() + E, f[i]->begin() + F);
    if (!stage.head) return;
    const FinalNorm& n = final_norms[static_cast<std::size_t>(micro) % final_norms.size()];
    lnf = n.y;
    lnf_mean = n.mean;
    lnf_rstd = n.rstd;
  }
  // Several chunks: the gradient each received, until its backward copies it into dres. The
  // interleaved schedule receives the next gradient in the group that sends dres, so not into dres;
  // a chunk holds at most one received gradient at a time (gpt_pipeline_schedule_test checks).
  // One chunk (1F1B) receives into dres itself, in a group that sends none.
  std::vector<bf16*> grad_in;

  bf16* pipe_buffer(Carries what, bool send, int c, int micro) override {
    // Received before the backward (or queued in grad_in), sent from dres after it.
    if (what == Carries::kGradient) return send || grad_in.empty() ? dres : grad_in[static_cast<std::size_t>(c)];
    const StageBlocks& x = chunks[static_cast<std::size_t>(c)];
    return slot_of(c, micro).bf[0][static_cast<std::size_t>(send ? x.last : x.first)];  // res
  }

 protected:
  std::vector<Fp8Shape> fp8_sites() const override {
    const int C = m.width, Cl = attn_width(), H = mlp_l;
    std::vector<Fp8Shape> sites;
    for (int l = 0; l < m.layers; ++l) sites.insert(sites.end(), {{C, 3 * Cl}, {Cl, C}, {C, H}, {H, C}});
    return sites;
  }
  void plan_activations(Planner& a) override {
    auto bf = [&](long long n) { return a.bf(n); };
    auto f32 = [&](long long n) { return a.f32(n); };
    const long long C = m.width, L = m.layers, NH = heads_l, Cl = attn_width(), H = mlp_l;
    // The naive path keeps per-head copies of Q, K, V and the [T, T] probabilities; the fused one
    // reads Q, K, V inside the QKV projection and keeps one fp32 statistic per query row.
    const bool naive = attention == Attention::kNaive;
    // The residual stream and the norms: this rank's rows only with sequence parallelism. A
    // pipeline stage holds its blocks' activations (the vectors stay indexed by the model's
    // layer), once per slot; with recompute only the residual stream is per slot.
    const long long R = rows_l;
    res.assign(L + 1, nullptr);
    for (auto* vec : {&r2, &ln1, &ln2, &qkv, &q, &k, &v, &probs, &atty, &fch, &fchg}) vec->assign(L, nullptr);
    for (auto* vec : {&ln1_mean, &ln1_rstd, &ln2_mean, &ln2_rstd, &attn_stats}) vec->assign(L, nullptr);
    // With recompute: the one block's buffers every block of every chunk and slot shares.
    std::vector<bf16*> one_bf;
    std::vector<float*> one_f32;
    slot_acts.assign(chunks.size(), {});
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const long long F = chunks[c].first, E = chunks[c].last;
      for (int slot = 0; slot < slots[c]; ++slot) {
        res[F] = bf(R * C);
        for (long long l = F; l < E; ++l) {
          res[l + 1] = bf(R * C);
          if (recompute && (l > F || !one_bf.empty())) continue;  // one block's buffers, shared by all (below)
          ln1[l] = bf(R * C);
          ln1_mean[l] = f32(R);
          ln1_rstd[l] = f32(R);
          qkv[l] = bf(BT * 3 * Cl);
          if (naive) {
            q[l] = bf(BT * Cl);
            k[l] = bf(BT * Cl);
            v[l] = bf(BT * Cl);
            probs[l] = bf(B * NH * static_cast<long long>(T) * T);
          } else {
            attn_stats[l] = f32(B * NH * static_cast<long long>(T));
          }
          atty[l] = bf(BT * Cl);
          r2[l] = bf(R * C);
          ln2[l] = bf(R * C);
          ln2_mean[l] = f32(R);
          ln2_rstd[l] = f32(R);
          fch[l] = bf(BT * H);
          fchg[l] = bf(BT * H);
        }
        if (recompute) {
          const auto b = bf_acts();
          const auto f = f32_acts();
          if (one_bf.empty()) {
            for (std::size_t i = 1; i < b.size(); ++i) one_bf.push_back((*b[i])[F]);  // all but res
            for (std::size_t i = 0; i < f.size(); ++i) one_f32.push_back((*f[i])[F]);
          }
          for (std::size_t i = 1; i < b.size(); ++i) std::fill(b[i]->begin() + F, b[i]->begin() + E, one_bf[i - 1]);
          for (std::size_t i = 0; i < f.size(); ++i) std::fill(f[i]->begin() + F, f[i]->begin() + E, one_f32[i]);
        }
        Slot& kept = slot_acts[c].emplace_back();
        for (auto* vec : bf_acts()) kept.bf.push_back(*vec);
        for (auto* vec : f32_acts()) kept.f32.push_back(*vec);
      }
    }
    final_norms.assign(static_cast<std::size_t>(holds_head() ? slots.back() : 0), FinalNorm{});
    for (FinalNorm& n : final_norms) n = FinalNorm{bf(R * C), f32(R), f32(R)};
    if (!final_norms.empty()) {
      lnf = final_norms[0].y;
      lnf_mean = final_norms[0].mean;
      lnf_rstd = final_norms[0].rstd;
    }
    use_chunk(0);
    use_slot(0);
    grad_in.clear();
    if (chunks.size() > 1)
      for (std::size_t c = 0; c < chunks.size(); ++c) grad_in.push_back(bf(R * C));
    if (naive) yh = bf(BT * Cl);
    dres = bf(R * C);
    dtmp = bf(R * C);
    dfch = bf(BT * H);
    dqkv = bf(BT * 3 * Cl);
    if (naive) {
      dq = bf(BT * Cl);
      dk = bf(BT * Cl);
      dv = bf(BT * Cl);
      dyh = bf(BT * Cl);
      dprobs = bf(B * NH * static_cast<long long>(T) * T);
    }
  }

 public:
  // Batched over B x NH heads, [T, hd] (or [T, T]) row-major per head: see forward/backward.
  void attn_gemm(cublasOperation_t ta, cublasOperation_t tb, int mm, int nn, int kk, const bf16* a, int lda,
                 long long sa, const bf16* b, int ldb, long long sb, bf16* d, int ldd, long long sd, float alpha,
                 float beta = 0.f) {
    Gemm gm;
    gm.ta = ta;
    gm.tb = tb;
    gm.m = mm;
    gm.n = nn;
    gm.k = kk;
    gm.a = a;
    gm.lda = lda;
    gm.stride_a = sa;
    gm.b = b;
    gm.ldb = ldb;
    gm.stride_b = sb;
    gm.d = d;
    gm.ldd = ldd;
    gm.stride_d = sd;
    gm.batch = B * heads_l;
    gm.alpha = alpha;
    gm.beta = beta;
    run(gm);
  }

  // Causal attention by query blocks: the queries of block b (rows b x blk ..) see keys
  // 0 .. (b + 1) x blk, so the [T, T] score, probability and gradient matrices are computed,
  // written and read only on and below the diagonal's blocks (10/16 of them for 4 blocks).
  int query_blocks() const { return T % 32 == 0 ? 4 : 1; }

  void attention_forward(int l, float scale) {
    const int hd = m.head_dim(), nb = query_blocks(), qb = T / nb;
    const long long th = static_cast<long long>(T) * hd, tt = static_cast<long long>(T) * T;
    for (int b = 0; b < nb; ++b) {
      const long long q0 = static_cast<long long>(b) * qb;
      const int keys = (b + 1) * qb;
      // S[i][j] = scale q_i . k_j: column-major S^T = K^T(op) Q.
      attn_gemm(CUBLAS_OP_T, CUBLAS_OP_N, keys, qb, hd, k[l], hd, th, q[l] + q0 * hd, hd, th, probs[l] + q0 * T, T, tt,
                scale);
    }
    causal_softmax_forward(probs[l], B * heads_l, T, qb, s);
    for (int b = 0; b < nb; ++b) {
      const long long q0 = static_cast<long long>(b) * qb;
      const int keys = (b + 1) * qb;
      // Y = P V: column-major Y^T = V^T P^T.
      attn_gemm(CUBLAS_OP_N, CUBLAS_OP_N, hd, qb, keys, v[l], hd, th, probs[l] + q0 * T, T, tt, yh + q0 * hd, hd, th,
                1.f);
    }
  }

  void attention_backward(int l, float scale) {
    const int hd = m.head_dim(), nb = query_blocks(), qb = T / nb;
    const long long th = static_cast<long long>(T) * hd, tt = static_cast<long long>(T) * T;
    // dP = dY V^T, and dV = P^T dY summed over the query blocks: the last block (every key) first,
    // writing, the others adding to their keys.
    for (int b = nb - 1; b >= 0; --b) {
      const long long q0 = static_cast<long long>(b) * qb;
      const int keys = (b + 1) * qb;
      attn_gemm(CUBLAS_OP_T, CUBLAS_OP_N, keys, qb, hd, v[l], hd, th, dyh + q0 * hd, hd, th, dprobs + q0 * T, T, tt,
                1.f);
      attn_gemm(CUBLAS_OP_N, CUBLAS_OP_T, hd, keys, qb, dyh + q0 * hd, hd, th, probs[l] + q0 * T, T, tt, dv, hd, th,
                1.f, b == nb - 1 ? 0.f : 1.f);
    }
    causal_softmax_backward(dprobs, probs[l], B * heads_l, T, qb, s);
    // dQ = scale dS K ; dK = scale dS^T Q (summed over the query blocks as dV).
    for (int b = nb - 1; b >= 0; --b) {
      const long long q0 = static_cast<long long>(b) * qb;
      const int keys = (b + 1) * qb;
      attn_gemm(CUBLAS_OP_N, CUBLAS_OP_N, hd, qb, keys, k[l], hd, th, dprobs + q0 * T, T, tt, dq + q0 * hd, hd, th,
                scale);
      attn_gemm(CUBLAS_OP_N, CUBLAS_OP_T, hd, keys, qb, q[l] + q0 * hd, hd, th, dprobs + q0 * T, T, tt, dk, hd, th,
                scale, b == nb - 1 ? 0.f : 1.f);
    }
  }

  void forward(int micro, int count) override {
    micro_count = count;
    use_slot(micro);
    const int C = m.width, rows = static_cast<int>(rows_l);
    if (stage.embedding) {
      embedding_forward(res[0], tokens, p(0), p(1), rows_l, first_row, T, C, s);
      mark("fwd.embedding");
    }
    for (int l = stage.first; l < stage.last; ++l) block_forward(l, false);
    if (!stage.head) return;
    const int L = m.layers;
    layernorm_forward(lnf, lnf_mean, lnf_rstd, res[L], p(lnf_w()), p(lnf_w() + 1), rows, C, s);
    mark("fwd.layernorm");
    head_forward(lnf, p(head_w()));
    mark("fwd.gemm_head");
    loss_forward(micro, count);
    mark("fwd.cross_entropy");
  }

  // Block l from its input res[l]. `again`: the backward pass's recomputation, which needs
  // everything up to MLP down's input but not the block's output (kept), and is charged to
  // bwd.recompute in the profile.
  void block_forward(int l, bool again) {
    const int C = m.width, NH = heads_l, hd = m.head_dim(), rows = static_cast<int>(rows_l);
    const int Cl = attn_width(), H = mlp_l;
    const float scale = 1.f / std::sqrt(static_cast<float>(hd));
    auto mark_fwd = [&](const char* name) {
      if (!again) mark(name);
    };
    layernorm_forward(ln1[l], ln1_mean[l], ln1_rstd[l], res[l], p(blk(l, 0)), p(blk(l, 1)), rows, C, s);
    mark_fwd("fwd.layernorm");
    const bf16* x1 = all_rows(ln1[l]);
    mark_fwd("fwd.tp_all_gather");
    block_linear(fp8_site(l, 0), qkv[l], x1, p(blk(l, 2)), p(blk(l, 3)), C, 3 * Cl);
    mark_fwd("fwd.gemm_qkv");
    if (attention == Attention::kCudnn) {
      sdpa_fwd->run(cudnn->get(), qkv[l], qkv[l] + Cl, qkv[l] + 2 * Cl, atty[l], attn_stats[l], sdpa_workspace.get());
    } else {
      split_heads(q[l], k[l], v[l], qkv[l], B, T, NH, hd, s);
      attention_forward(l, scale);
      heads_to_rows(atty[l], yh, B, T, NH, hd, s);
    }
    mark_fwd("fwd.attention");
    block_linear(fp8_site(l, 1), full_rows(r2[l]), atty[l], p(blk(l, 4)), once(p(blk(l, 5))), Cl, C, once(res[l]));
    mark_fwd("fwd.gemm_proj");
    sum_partials(r2[l]);
    mark_fwd(fwd_sum_mark());
    add_once(r2[l], res[l], p(blk(l, 5)));
    mark_fwd("fwd.residual");
    layernorm_forward(ln2[l], ln2_mean[l], ln2_rstd[l], r2[l], p(blk(l, 6)), p(blk(l, 7)), rows, C, s);
    mark_fwd("fwd.layernorm");
    const bf16* x2 = all_rows(ln2[l]);
    mark_fwd("fwd.tp_all_gather");
    // In FP8 GELU's output goes to MLP down in FP8 from the GEMM, unless several micro-batches are
    // in flight (the transpose kept for its weight gradient holds one).
    block_linear(fp8_site(l, 2), fch[l], x2, p(blk(l, 8)), p(blk(l, 9)), C, H, nullptr, fchg[l],
                 several_slots() ? -1 : fp8_site(l, 3));
    if (again) {
      mark("bwd.recompute");
      return;
    }
    block_linear(fp8_site(l, 3), full_rows(res[l + 1]), fchg[l], p(blk(l, 10)), once(p(blk(l, 11))), H, C, once(r2[l]));
    mark_fwd("fwd.gemm_mlp");
    sum_partials(res[l + 1]);
    mark_fwd(fwd_sum_mark());
    add_once(res[l + 1], r2[l], p(blk(l, 11)));
    mark_fwd("fwd.residual");
  }

  // dres += the norm's input gradient on this rank's rows; its weight and bias gradients.
  void layernorm_backward(const bf16* dout, const bf16* x, const float* mean, const float* rstd, std::size_t w_index,
                          bool accumulate) {
    gpt::layernorm_backward(dres, g(w_index), g(w_index + 1), accumulate, norm_partials, dout, x, mean, rstd,
                            p(w_index), static_cast<int>(rows_l), m.width, s);
  }

  void backward(int micro) override {
    const bool acc = micro > 0;
    const int C = m.width, NH = heads_l, hd = m.head_dim();
    const int Cl = attn_width(), H = mlp_l;
    const float scale = 1.f / std::sqrt(static_cast<float>(hd));
    const int L = m.layers;
    use_slot(micro);
    if (stage.head) {
      // logits now hold d loss / d logits, unless another micro-batch's forward ran since (the
      // head's chunk with several slots): then again from this one's final norm.
      if (final_norms.size() > 1) {
        head_forward(lnf, p(head_w()));
        loss_gradient();
        mark("bwd.recompute");
      }
      head_backward(dtmp, g(head_w()), lnf, p(head_w()), acc);
      mark("bwd.gemm_head");
      CUDA_CHECK(cudaMemsetAsync(dres, 0, sizeof(bf16) * rows_l * C, s));
      layernorm_backward(dtmp, res[L], lnf_mean, lnf_rstd, lnf_w(), acc);
      mark("bwd.layernorm");
    } else if (!grad_in.empty()) {  // the gradient the next virtual stage sent, into the accumulator
      CUDA_CHECK(cudaMemcpyAsync(dres, grad_in[static_cast<std::size_t>(chunk)], sizeof(bf16) * rows_l * C,
                                 cudaMemcpyDeviceToDevice, s));
    }  // else dres holds the gradient the next stage sent
    for (int l = stage.last - 1; l >= stage.first; --l) {
      // The last block's activations are still in the shared buffers from the forward pass, unless
      // another micro-batch's forward ran since (a pipeline stage with several slots).
      if (recompute && (l < stage.last - 1 || several_slots())) block_forward(l, true);
      // MLP: res[l+1] = r2 + down(gelu(up(ln2(r2)))).
      const bf16* dy = all_rows(dres);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 3), g(blk(l, 10)), g(blk(l, 11)), dy, fchg[l], H, C, acc);
      // dfch: d(up's output); in FP8 it is cast for the up projection as it is made.
      block_input_grad(fp8_site(l, 3), dfch, dy, p(blk(l, 10)), H, C, fch[l], fp8_site(l, 2));
      mark("bwd.gemm_mlp");
      const bf16* x2 = all_rows(ln2[l]);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 2), g(blk(l, 8)), g(blk(l, 9)), dfch, x2, C, H, acc);
      block_input_grad(fp8_site(l, 2), full_rows(dtmp), dfch, p(blk(l, 8)), C, H);
      mark("bwd.gemm_mlp");
      sum_partials(dtmp);
      mark(bwd_sum_mark());
      layernorm_backward(dtmp, r2[l], ln2_mean[l], ln2_rstd[l], blk(l, 6), acc);
      mark("bwd.layernorm");
      // Attention: r2 = res[l] + proj(attn(qkv(ln1(res[l])))).
      dy = all_rows(dres);
      mark("bwd.tp_all_gather");
      bf16* datty = full_rows(dtmp);
      block_weight_grad(fp8_site(l, 1), g(blk(l, 4)), g(blk(l, 5)), dy, atty[l], Cl, C, acc);
      block_input_grad(fp8_site(l, 1), datty, dy, p(blk(l, 4)), Cl, C);
      mark("bwd.gemm_proj");
      if (attention == Attention::kCudnn) {
        sdpa_bwd->run(cudnn->get(), qkv[l], qkv[l] + Cl, qkv[l] + 2 * Cl, atty[l], datty, attn_stats[l], dqkv,
                      dqkv + Cl, dqkv + 2 * Cl, sdpa_workspace.get());
      } else {
        rows_to_heads(dyh, datty, B, T, NH, hd, s);
        attention_backward(l, scale);
        merge_head_grads(dqkv, dq, dk, dv, B, T, NH, hd, s);
      }
      mark("bwd.attention");
      const bf16* x1 = all_rows(ln1[l]);
      mark("bwd.tp_all_gather");
      block_weight_grad(fp8_site(l, 0), g(blk(l, 2)), g(blk(l, 3)), dqkv, x1, C, 3 * Cl, acc);
      block_input_grad(fp8_site(l, 0), full_rows(dtmp), dqkv, p(blk(l, 2)), C, 3 * Cl);
      mark("bwd.gemm_qkv");
      sum_partials(dtmp);
      mark(bwd_sum_mark());
      layernorm_backward(dtmp, res[l], ln1_mean[l], ln1_rstd[l], blk(l, 0), acc);
      mark("bwd.layernorm");
      layer_done(l, micro);
    }
    if (!stage.embedding) return;  // dres: the gradient to send to the previous stage
    // The embedding adds its gradient to wte's: on a first stage without the head, nothing wrote
    // it before.
    if (!holds_head() && !acc) CUDA_CHECK(cudaMemsetAsync(g(0), 0, sizeof(bf16) * tensors[0].numel(), s));
    embedding_backward(g(0), g(1), dres, tokens, rows_l, first_row, T, C, acc, s);
    mark("bwd.embedding");
    layer_done(-1, micro);
  }
};

}  // namespace

std::unique_ptr<StepCore> make_gpt2_step(const ModelShape& m, int B, int T, cudaStream_t s, Attention attention,
                                         const Parallel& par) {
  return std::make_unique<Gpt2Step>(m, B, T, s, attention, par);
}

}  // namespace scalebench::gpt
