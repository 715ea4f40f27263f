#include "workloads/gpt/gpt_model.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_sdpa_graph.hpp"

namespace scalebench::gpt {

namespace {

using gemm::LtHandle;
using gemm::MatmulDesc;
using gemm::MatmulPreference;
using gemm::MatrixLayout;

constexpr std::size_t kWorkspaceBytes = 32u << 20;

// Byte offsets of every buffer inside one allocation (256-byte aligned), computed once for the
// allocation and once for model_bytes().
struct Arena {
  std::size_t size = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t at = size;
    size += (bytes + 255) / 256 * 256;
    return at;
  }
};

// One GEMM as cuBLASLt sees it: column-major, D = alpha op(A) op(B) + beta C, optional batch.
struct Gemm {
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  const bf16* a = nullptr;
  int lda = 0;
  long long stride_a = 0;
  const bf16* b = nullptr;
  int ldb = 0;
  long long stride_b = 0;
  bf16* d = nullptr;
  int ldd = 0;
  long long stride_d = 0;
  const bf16* c = nullptr;  // null: D (with beta 0 unless accumulating into D)
  int batch = 1;
  float alpha = 1.f, beta = 0.f;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;  // bias, or where the bias gradient goes
  void* aux = nullptr;         // GELU's input (saved in forward, read in backward)
  long long aux_ld = 0;
};

}  // namespace

struct GptModel::Impl {
  ModelShape m;
  int B, T;
  Attention attention;
  long long BT;
  cudaStream_t s;
  std::vector<Tensor> tensors;
  long long n_params = 0;
  int steps_done = 0;
  int micro_count = 1;

  gpu::DeviceBuffer mem;
  std::byte* base = nullptr;
  LtHandle lt;
  std::map<std::tuple<int, int, int, int, int, int, int, int, int, int, int, int>, cublasLtMatmulAlgo_t> algos;

  // Flat parameter-sized buffers.
  bf16 *params = nullptr, *grads = nullptr;
  float *master = nullptr, *adam_m = nullptr, *adam_v = nullptr;
  // Data.
  int *tokens = nullptr, *targets = nullptr;
  // Activations kept for backward, per layer.
  std::vector<bf16*> res, r2, ln1, ln2, qkv, q, k, v, probs, atty, fch, fchg;
  std::vector<float*> ln1_mean, ln1_rstd, ln2_mean, ln2_rstd, attn_stats;
  bf16 *lnf = nullptr, *logits = nullptr;
  float *lnf_mean = nullptr, *lnf_rstd = nullptr, *losses = nullptr, *loss_sum = nullptr, *norm_sq = nullptr;
  // Scratch.
  bf16 *yh = nullptr, *dres = nullptr, *dtmp = nullptr, *dfch = nullptr, *dqkv = nullptr, *dq = nullptr, *dk = nullptr,
       *dv = nullptr, *dyh = nullptr, *dprobs = nullptr, *bias_scratch = nullptr;
  float *dw32 = nullptr, *db32 = nullptr;
  void* workspace = nullptr;
  // Fused attention (Attention::kCudnn): its handle, plans and workspace.
  std::unique_ptr<gpu::CudnnHandle> cudnn;
  std::unique_ptr<gpu::SdpaForward> sdpa_fwd;
  std::unique_ptr<gpu::SdpaBackward> sdpa_bwd;
  gpu::DeviceBuffer sdpa_workspace;
  // Profile mode: an event after each group of kernels; the time since the previous one is
  // charged to the group's name.
  bool profiling = false;
  std::vector<std::pair<const char*, gpu::Event>> marks;
  void mark(const char* name) {
    if (!profiling) return;
    marks.emplace_back(name, gpu::Event());
    CUDA_CHECK(cudaEventRecord(marks.back().second.get(), s));
  }

  Impl(const ModelShape& shape, int b, int t, cudaStream_t stream, Attention att)
      : m(shape),
        B(b),
        T(t),
        attention(att),
        BT(static_cast<long long>(b) * t),
        s(stream),
        tensors(parameter_layout(shape, t)) {
    n_params = tensors.back().offset + tensors.back().numel();
  }

  // Lays out every buffer; with `at` set, records the pointers.
  std::size_t plan(std::byte* at) {
    Arena a;
    auto bf = [&](long long n) { return at ? reinterpret_cast<bf16*>(at + a.take(n * 2)) : (a.take(n * 2), nullptr); };
    auto f32 = [&](long long n) {
      return at ? reinterpret_cast<float*>(at + a.take(n * 4)) : (a.take(n * 4), nullptr);
    };
    const long long C = m.width, L = m.layers, NH = m.heads, Vp = m.padded_vocab;
    params = bf(n_params);
    grads = bf(n_params);
    master = f32(n_params);
    adam_m = f32(n_params);
    adam_v = f32(n_params);
    tokens = reinterpret_cast<int*>(f32(BT));
    targets = reinterpret_cast<int*>(f32(BT));
    res.assign(L + 1, nullptr);
    for (auto* vec : {&r2, &ln1, &ln2, &qkv, &q, &k, &v, &probs, &atty, &fch, &fchg}) vec->assign(L, nullptr);
    for (auto* vec : {&ln1_mean, &ln1_rstd, &ln2_mean, &ln2_rstd, &attn_stats}) vec->assign(L, nullptr);
    // The naive path keeps per-head copies of Q, K, V and the [T, T] probabilities; the fused one
    // reads Q, K, V inside the QKV projection and keeps one fp32 statistic per query row.
    const bool naive = attention == Attention::kNaive;
    res[0] = bf(BT * C);
    for (long long l = 0; l < L; ++l) {
      ln1[l] = bf(BT * C);
      ln1_mean[l] = f32(BT);
      ln1_rstd[l] = f32(BT);
      qkv[l] = bf(BT * 3 * C);
      if (naive) {
        q[l] = bf(BT * C);
        k[l] = bf(BT * C);
        v[l] = bf(BT * C);
        probs[l] = bf(B * NH * static_cast<long long>(T) * T);
      } else {
        attn_stats[l] = f32(B * NH * static_cast<long long>(T));
      }
      atty[l] = bf(BT * C);
      r2[l] = bf(BT * C);
      ln2[l] = bf(BT * C);
      ln2_mean[l] = f32(BT);
      ln2_rstd[l] = f32(BT);
      fch[l] = bf(BT * m.mlp);
      fchg[l] = bf(BT * m.mlp);
      res[l + 1] = bf(BT * C);
    }
    lnf = bf(BT * C);
    lnf_mean = f32(BT);
    lnf_rstd = f32(BT);
    logits = bf(BT * Vp);
    losses = f32(BT);
    loss_sum = f32(1);
    norm_sq = f32(1);
    if (naive) yh = bf(BT * C);
    dres = bf(BT * C);
    dtmp = bf(BT * C);
    dfch = bf(BT * m.mlp);
    dqkv = bf(BT * 3 * C);
    if (naive) {
      dq = bf(BT * C);
      dk = bf(BT * C);
      dv = bf(BT * C);
      dyh = bf(BT * C);
      dprobs = bf(B * NH * static_cast<long long>(T) * T);
    }
    bias_scratch = bf(std::max<long long>(Vp, 4 * C));
    dw32 = f32(C);
    db32 = f32(C);
    const std::size_t ws = a.take(kWorkspaceBytes);
    if (at) workspace = at + ws;
    return a.size;
  }

  bf16* p(std::size_t i) const { return params + tensors[i].offset; }
  bf16* g(std::size_t i) const { return grads + tensors[i].offset; }
  // Index of block l's tensor `j` (0 ln1.w, 1 ln1.b, 2 qkv.w, 3 qkv.b, 4 proj.w, 5 proj.b, 6 ln2.w,
  // 7 ln2.b, 8 up.w, 9 up.b, 10 down.w, 11 down.b); 0 wte, 1 wpe, then blocks, then ln_f w, b.
  std::size_t blk(int l, int j) const { return 2 + static_cast<std::size_t>(l) * 12 + static_cast<std::size_t>(j); }
  std::size_t lnf_w() const { return 2 + static_cast<std::size_t>(m.layers) * 12; }

  void run(const Gemm& x) {
    const bool with_c = x.c != nullptr || x.beta != 0.f;
    const bf16* c = x.c ? x.c : x.d;
    MatmulDesc desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
    desc.set(CUBLASLT_MATMUL_DESC_TRANSA, x.ta);
    desc.set(CUBLASLT_MATMUL_DESC_TRANSB, x.tb);
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, x.epilogue);
    if (x.bias) desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, x.bias);
    if (x.aux) {
      desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, x.aux);
      desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, x.aux_ld);
    }
    const int ar = x.ta == CUBLAS_OP_N ? x.m : x.k, ac = x.ta == CUBLAS_OP_N ? x.k : x.m;
    const int br = x.tb == CUBLAS_OP_N ? x.k : x.n, bc = x.tb == CUBLAS_OP_N ? x.n : x.k;
    MatrixLayout la(CUDA_R_16BF, ar, ac, x.lda), lb(CUDA_R_16BF, br, bc, x.ldb), ld(CUDA_R_16BF, x.m, x.n, x.ldd);
    if (x.batch > 1) {
      for (auto [layout, stride] : {std::pair{la.get(), x.stride_a}, {lb.get(), x.stride_b}, {ld.get(), x.stride_d}}) {
        CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &x.batch, sizeof x.batch));
        CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                      sizeof stride));
      }
    }
    const auto key = std::make_tuple(static_cast<int>(x.ta), static_cast<int>(x.tb), x.m, x.n, x.k, x.lda, x.ldb, x.ldd,
                                     x.batch, static_cast<int>(x.epilogue), with_c ? 1 : 0, x.c && x.c != x.d ? 1 : 0);
    auto it = algos.find(key);
    if (it == algos.end()) {
      MatmulPreference pref(kWorkspaceBytes);
      cublasLtMatmulHeuristicResult_t h{};
      int found = 0;
      CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt.get(), desc.get(), la.get(), lb.get(), ld.get(), ld.get(),
                                                  pref.get(), 1, &h, &found));
      if (found == 0)
        throw Error("cuBLASLt has no algorithm for the GEMM m=" + std::to_string(x.m) + " n=" + std::to_string(x.n) +
                    " k=" + std::to_string(x.k) + " epilogue " + std::to_string(static_cast<int>(x.epilogue)));
      it = algos.emplace(key, h.algo).first;
    }
    const float beta = with_c ? (x.beta != 0.f ? x.beta : 1.f) : 0.f;
    CUBLAS_CHECK(cublasLtMatmul(lt.get(), desc.get(), &x.alpha, x.a, la.get(), x.b, lb.get(), &beta, c, ld.get(), x.d,
                                ld.get(), &it->second, workspace, kWorkspaceBytes, s));
  }

  // y[BT, out] = x[BT, in] W^T (+ bias) (+ residual) ; W is [out, in].
  void linear(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, const bf16* residual = nullptr,
              cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT, bf16* aux = nullptr) {
    Gemm gm;
    gm.ta = CUBLAS_OP_T;
    gm.m = out;
    gm.n = static_cast<int>(BT);
    gm.k = in;
    gm.a = w;
    gm.lda = in;
    gm.b = x;
    gm.ldb = in;
    gm.d = y;
    gm.ldd = out;
    gm.c = residual;
    gm.beta = residual ? 1.f : 0.f;
    gm.epilogue = epi != CUBLASLT_EPILOGUE_DEFAULT ? epi : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
    gm.bias = bias;
    gm.aux = aux;
    gm.aux_ld = out;
    run(gm);
  }

  // dW[out, in] (+)= dy^T x and, when `dbias`, the bias gradient (fused into the GEMM).
  void linear_weight_grad(bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, int in, int out, bool accumulate) {
    Gemm gm;
    gm.tb = CUBLAS_OP_T;
    gm.m = in;
    gm.n = out;
    gm.k = static_cast<int>(BT);
    gm.a = x;
    gm.lda = in;
    gm.b = dy;
    gm.ldb = out;
    gm.d = dw;
    gm.ldd = in;
    gm.beta = accumulate ? 1.f : 0.f;
    if (dbias) {
      gm.epilogue = CUBLASLT_EPILOGUE_BGRADB;
      gm.bias = accumulate ? bias_scratch : dbias;
    }
    run(gm);
    if (dbias && accumulate) add_inplace(dbias, bias_scratch, out, s);
  }

  // dx[BT, in] = dy[BT, out] W (optionally through GELU's derivative at `aux`).
  void linear_input_grad(bf16* dx, const bf16* dy, const bf16* w, int in, int out, bf16* gelu_input = nullptr) {
    Gemm gm;
    gm.m = in;
    gm.n = static_cast<int>(BT);
    gm.k = out;
    gm.a = w;
    gm.lda = in;
    gm.b = dy;
    gm.ldb = out;
    gm.d = dx;
    gm.ldd = in;
    if (gelu_input) {
      gm.epilogue = CUBLASLT_EPILOGUE_DGELU;
      gm.aux = gelu_input;
      gm.aux_ld = in;
    }
    run(gm);
  }

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
    gm.batch = B * m.heads;
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
    causal_softmax_forward(probs[l], B * m.heads, T, qb, s);
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
    causal_softmax_backward(dprobs, probs[l], B * m.heads, T, qb, s);
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

  void forward(int micro, int count) {
    micro_count = count;
    const int C = m.width, NH = m.heads, hd = m.head_dim(), Vp = m.padded_vocab, rows = static_cast<int>(BT);
    const float scale = 1.f / std::sqrt(static_cast<float>(hd));
    embedding_forward(res[0], tokens, p(0), p(1), B, T, C, s);
    mark("fwd.embedding");
    for (int l = 0; l < m.layers; ++l) {
      layernorm_forward(ln1[l], ln1_mean[l], ln1_rstd[l], res[l], p(blk(l, 0)), p(blk(l, 1)), rows, C, s);
      mark("fwd.layernorm");
      linear(qkv[l], ln1[l], p(blk(l, 2)), p(blk(l, 3)), C, 3 * C);
      mark("fwd.gemm_qkv");
      if (attention == Attention::kCudnn) {
        sdpa_fwd->run(cudnn->get(), qkv[l], qkv[l] + C, qkv[l] + 2 * C, atty[l], attn_stats[l], sdpa_workspace.get());
      } else {
        split_heads(q[l], k[l], v[l], qkv[l], B, T, NH, hd, s);
        attention_forward(l, scale);
        heads_to_rows(atty[l], yh, B, T, NH, hd, s);
      }
      mark("fwd.attention");
      linear(r2[l], atty[l], p(blk(l, 4)), p(blk(l, 5)), C, C, res[l]);
      mark("fwd.gemm_proj");
      layernorm_forward(ln2[l], ln2_mean[l], ln2_rstd[l], r2[l], p(blk(l, 6)), p(blk(l, 7)), rows, C, s);
      mark("fwd.layernorm");
      linear(fchg[l], ln2[l], p(blk(l, 8)), p(blk(l, 9)), C, m.mlp, nullptr, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, fch[l]);
      linear(res[l + 1], fchg[l], p(blk(l, 10)), p(blk(l, 11)), m.mlp, C, r2[l]);
      mark("fwd.gemm_mlp");
    }
    const int L = m.layers;
    layernorm_forward(lnf, lnf_mean, lnf_rstd, res[L], p(lnf_w()), p(lnf_w() + 1), rows, C, s);
    mark("fwd.layernorm");
    linear(logits, lnf, p(0), nullptr, C, Vp);
    mark("fwd.gemm_head");
    cross_entropy_fused(logits, losses, targets, rows, m.vocab, Vp, 1.f / (static_cast<float>(BT) * count), s);
    mean_into(loss_sum, losses, rows, micro > 0, s);
    mark("fwd.cross_entropy");
  }

  void layernorm_backward(int rows, int C, const bf16* dout, const bf16* x, const float* mean, const float* rstd,
                          std::size_t w_index, bool accumulate) {
    CUDA_CHECK(cudaMemsetAsync(dw32, 0, sizeof(float) * C, s));
    CUDA_CHECK(cudaMemsetAsync(db32, 0, sizeof(float) * C, s));
    gpt::layernorm_backward(dres, dw32, db32, dout, x, mean, rstd, p(w_index), rows, C, s);
    store_gradient(g(w_index), dw32, C, accumulate, s);
    store_gradient(g(w_index + 1), db32, C, accumulate, s);
  }

  void backward(int micro) {
    const bool acc = micro > 0;
    const int C = m.width, NH = m.heads, hd = m.head_dim(), Vp = m.padded_vocab, rows = static_cast<int>(BT);
    const float scale = 1.f / std::sqrt(static_cast<float>(hd));
    const int L = m.layers;
    // logits now hold d loss / d logits.
    linear_weight_grad(g(0), nullptr, logits, lnf, C, Vp, acc);
    linear_input_grad(dtmp, logits, p(0), C, Vp);
    mark("bwd.gemm_head");
    CUDA_CHECK(cudaMemsetAsync(dres, 0, sizeof(bf16) * BT * C, s));
    layernorm_backward(rows, C, dtmp, res[L], lnf_mean, lnf_rstd, lnf_w(), acc);
    mark("bwd.layernorm");
    for (int l = L - 1; l >= 0; --l) {
      // MLP: res[l+1] = r2 + down(gelu(up(ln2(r2)))).
      linear_weight_grad(g(blk(l, 10)), g(blk(l, 11)), dres, fchg[l], m.mlp, C, acc);
      linear_input_grad(dfch, dres, p(blk(l, 10)), m.mlp, C, fch[l]);
      linear_weight_grad(g(blk(l, 8)), g(blk(l, 9)), dfch, ln2[l], C, m.mlp, acc);
      linear_input_grad(dtmp, dfch, p(blk(l, 8)), C, m.mlp);
      mark("bwd.gemm_mlp");
      layernorm_backward(rows, C, dtmp, r2[l], ln2_mean[l], ln2_rstd[l], blk(l, 6), acc);
      mark("bwd.layernorm");
      // Attention: r2 = res[l] + proj(attn(qkv(ln1(res[l])))).
      linear_weight_grad(g(blk(l, 4)), g(blk(l, 5)), dres, atty[l], C, C, acc);
      linear_input_grad(dtmp, dres, p(blk(l, 4)), C, C);
      mark("bwd.gemm_proj");
      if (attention == Attention::kCudnn) {
        sdpa_bwd->run(cudnn->get(), qkv[l], qkv[l] + C, qkv[l] + 2 * C, atty[l], dtmp, attn_stats[l], dqkv, dqkv + C,
                      dqkv + 2 * C, sdpa_workspace.get());
      } else {
        rows_to_heads(dyh, dtmp, B, T, NH, hd, s);
        attention_backward(l, scale);
        merge_head_grads(dqkv, dq, dk, dv, B, T, NH, hd, s);
      }
      mark("bwd.attention");
      linear_weight_grad(g(blk(l, 2)), g(blk(l, 3)), dqkv, ln1[l], C, 3 * C, acc);
      linear_input_grad(dtmp, dqkv, p(blk(l, 2)), C, 3 * C);
      mark("bwd.gemm_qkv");
      layernorm_backward(rows, C, dtmp, res[l], ln1_mean[l], ln1_rstd[l], blk(l, 0), acc);
      mark("bwd.layernorm");
    }
    embedding_backward(g(0), g(1), dres, tokens, B, T, C, acc, s);
    mark("bwd.embedding");
  }

  void optimizer_step(const Hyper& h) {
    ++steps_done;
    sum_of_squares(norm_sq, grads, n_params, s);
    mark("opt.grad_norm");
    adamw(master, params, grads, adam_m, adam_v, n_params, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, steps_done,
          norm_sq, h.clip, s);
    mark("opt.adamw");
  }

  // The fused attention's plans for this model's shape: Q, K, V are read in place from the QKV
  // projection's rows [B, T, 3, heads, head_dim], O and dO are the rows [B, T, heads, head_dim].
  void plan_fused_attention() {
    const long long C = m.width, hd = m.head_dim();
    gpu::SdpaShape sh;
    sh.batch = B;
    sh.heads = m.heads;
    sh.seq = T;
    sh.head_dim = hd;
    sh.qkv_strides = {T * 3 * C, hd, 3 * C, 1};
    sh.out_strides = {T * C, hd, C, 1};
    sh.scale = 1.f / std::sqrt(static_cast<float>(hd));
    cudnn = std::make_unique<gpu::CudnnHandle>();
    CUDNN_CHECK(cudnnSetStream(cudnn->get(), s));
    sdpa_fwd = std::make_unique<gpu::SdpaForward>(cudnn->get(), sh);
    sdpa_bwd = std::make_unique<gpu::SdpaBackward>(cudnn->get(), sh);
    const std::int64_t ws = std::max(sdpa_fwd->workspace_bytes(), sdpa_bwd->workspace_bytes());
    sdpa_workspace = gpu::DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(ws, 256)));
  }

  void init(unsigned long long seed) {
    const float resid_std = 0.02f / std::sqrt(2.f * m.layers);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      float* mp = master + t.offset;
      bf16* pp = params + t.offset;
      switch (t.kind) {
        case TensorKind::kNormWeight:
          init_constant(mp, pp, t.numel(), 1.f, s);
          break;
        case TensorKind::kNormBias:
        case TensorKind::kQkvBias:
        case TensorKind::kAttnOutBias:
        case TensorKind::kMlpUpBias:
        case TensorKind::kMlpDownBias:
          init_constant(mp, pp, t.numel(), 0.f, s);
          break;
        case TensorKind::kAttnOut:
        case TensorKind::kMlpDown:
          init_normal(mp, pp, t.numel(), resid_std, seed + i * 0x9e3779b9ull, s);
          break;
        default:
          init_normal(mp, pp, t.numel(), 0.02f, seed + i * 0x9e3779b9ull, s);
          break;
      }
    }
    CUDA_CHECK(cudaMemsetAsync(adam_m, 0, sizeof(float) * n_params, s));
    CUDA_CHECK(cudaMemsetAsync(adam_v, 0, sizeof(float) * n_params, s));
    CUDA_CHECK(cudaMemsetAsync(grads, 0, sizeof(bf16) * n_params, s));
  }
};

Attention attention_from_name(const std::string& name) {
  if (name == "naive") return Attention::kNaive;
  if (name == "cudnn") return Attention::kCudnn;
  throw Error("attention: '" + name + "'; expected naive or cudnn");
}

std::size_t model_bytes(const ModelShape& m, int B, int T, Attention attention) {
  GptModel::Impl probe(m, B, T, nullptr, attention);
  return probe.plan(nullptr);
}

GptModel::GptModel(const ModelShape& m, int B, int T, unsigned long long seed, cudaStream_t stream, Attention attention)
    : impl_(std::make_unique<Impl>(m, B, T, stream, attention)) {
  if (m.family != Family::kGpt2) throw Error("model: " + m.name + "'s training step is not done yet (GPT-2 is)");
  if (m.head_dim() % 8 != 0) throw Error("model: head width must be a multiple of 8");
  const std::size_t bytes = impl_->plan(nullptr);
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "out of memory: needs %.1f GiB, has %.1f GiB", bytes / 1073741824.0,
                  free_b / 1073741824.0);
    throw Error(msg);
  }
  if (attention == Attention::kCudnn) impl_->plan_fused_attention();
  impl_->mem = gpu::DeviceBuffer(bytes);
  impl_->plan(impl_->mem.get());
  impl_->init(seed);
  synthetic_tokens(seed ^ 0x5eedull);
}

GptModel::~GptModel() = default;

void GptModel::set_tokens(const std::vector<int>& inputs, const std::vector<int>& targets) {
  if (static_cast<long long>(inputs.size()) != impl_->BT || static_cast<long long>(targets.size()) != impl_->BT)
    throw Error("set_tokens: expected " + std::to_string(impl_->BT) + " inputs and targets");
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->tokens, inputs.data(), sizeof(int) * inputs.size(), cudaMemcpyHostToDevice, impl_->s));
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->targets, targets.data(), sizeof(int) * targets.size(), cudaMemcpyHostToDevice, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
}

void GptModel::synthetic_tokens(unsigned long long seed) {
  random_tokens(impl_->tokens, impl_->targets, impl_->B, impl_->T, impl_->m.vocab, seed, impl_->s);
}

void GptModel::forward(int micro, int count) { impl_->forward(micro, count); }
void GptModel::backward(int micro) { impl_->backward(micro); }
void GptModel::optimizer_step(const Hyper& h) { impl_->optimizer_step(h); }

void GptModel::step(int grad_accum, const Hyper& h) {
  for (int i = 0; i < grad_accum; ++i) {
    impl_->forward(i, grad_accum);
    impl_->backward(i);
  }
  impl_->optimizer_step(h);
}

float GptModel::loss() const {
  float v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, impl_->loss_sum, sizeof v, cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return v / static_cast<float>(impl_->micro_count);
}

float GptModel::grad_norm() const {
  float v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, impl_->norm_sq, sizeof v, cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return std::sqrt(v);
}

namespace {
std::vector<float> bf16_to_host(const bf16* d, long long n, cudaStream_t s) {
  std::vector<bf16> raw(static_cast<std::size_t>(n));
  CUDA_CHECK(cudaMemcpyAsync(raw.data(), d, sizeof(bf16) * n, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = __bfloat162float(raw[i]);
  return out;
}
}  // namespace

std::vector<float> GptModel::master() const {
  std::vector<float> out(static_cast<std::size_t>(impl_->n_params));
  CUDA_CHECK(cudaMemcpyAsync(out.data(), impl_->master, sizeof(float) * out.size(), cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return out;
}

std::vector<float> GptModel::params() const { return bf16_to_host(impl_->params, impl_->n_params, impl_->s); }
std::vector<float> GptModel::grads() const { return bf16_to_host(impl_->grads, impl_->n_params, impl_->s); }

void GptModel::load_master(const std::vector<float>& values) {
  if (static_cast<long long>(values.size()) != impl_->n_params)
    throw Error("load_master: expected " + std::to_string(impl_->n_params) + " values");
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->master, values.data(), sizeof(float) * values.size(), cudaMemcpyHostToDevice, impl_->s));
  to_bf16(impl_->params, impl_->master, impl_->n_params, impl_->s);
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
}

Json GptModel::profile(int grad_accum, const Hyper& h) {
  Impl& x = *impl_;
  x.profiling = true;
  x.marks.clear();
  x.mark("start");
  step(grad_accum, h);
  x.profiling = false;
  CUDA_CHECK(cudaEventSynchronize(x.marks.back().second.get()));
  std::map<std::string, double> ms;
  double total = 0;
  for (std::size_t i = 1; i < x.marks.size(); ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, x.marks[i - 1].second.get(), x.marks[i].second.get()));
    ms[x.marks[i].first] += t;
    total += t;
  }
  x.marks.clear();
  Json out = Json::object();
  for (const auto& [name, t] : ms) out[name] = Json{{"ms", t}, {"pct", 100.0 * t / total}};
  out["total_ms"] = total;
  return out;
}

const std::vector<Tensor>& GptModel::layout() const { return impl_->tensors; }
std::size_t GptModel::device_bytes() const { return impl_->mem.bytes(); }

}  // namespace scalebench::gpt
