#include "workloads/gpt/bf16_gemm.hpp"

#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::gpt {

using gemm::MatmulDesc;
using gemm::MatmulPreference;
using gemm::MatrixLayout;

// A GEMM's descriptors as cuBLASLt takes them, and the key of its shape: everything the heuristic
// is given, C in place or apart included (one query, or one tuning, per GEMM shape).
struct Bf16Gemms::Described {
  MatmulDesc desc{CUBLAS_COMPUTE_32F, CUDA_R_32F};
  MatrixLayout la, lb, ld;
  const bf16* c;
  float beta;
  AlgoKey key;

  explicit Described(const Gemm& x)
      : la(CUDA_R_16BF, x.ta == CUBLAS_OP_N ? x.m : x.k, x.ta == CUBLAS_OP_N ? x.k : x.m, x.lda),
        lb(CUDA_R_16BF, x.tb == CUBLAS_OP_N ? x.k : x.n, x.tb == CUBLAS_OP_N ? x.n : x.k, x.ldb),
        ld(CUDA_R_16BF, x.m, x.n, x.ldd) {
    // C is D unless given (the residual add in place, or accumulating into a gradient); a GEMM
    // with a C and no beta adds it whole.
    const bool with_c = x.c != nullptr || x.beta != 0.f;
    c = x.c ? x.c : x.d;
    beta = with_c ? (x.beta != 0.f ? x.beta : 1.f) : 0.f;
    desc.set(CUBLASLT_MATMUL_DESC_TRANSA, x.ta);
    desc.set(CUBLASLT_MATMUL_DESC_TRANSB, x.tb);
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, x.epilogue);
    if (x.bias) desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, x.bias);
    if (x.aux) {
      desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, x.aux);
      desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, x.aux_ld);
    }
    if (x.batch > 1) {
      for (auto [layout, stride] : {std::pair{la.get(), x.stride_a}, {lb.get(), x.stride_b}, {ld.get(), x.stride_d}}) {
        CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &x.batch, sizeof x.batch));
        CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                      sizeof stride));
      }
    }
    key = std::make_tuple(static_cast<int>(x.ta), static_cast<int>(x.tb), x.m, x.n, x.k, x.lda, x.ldb, x.ldd, x.batch,
                          static_cast<int>(x.epilogue), with_c ? 1 : 0, x.c && x.c != x.d ? 1 : 0);
  }
};

std::vector<cublasLtMatmulHeuristicResult_t> Bf16Gemms::candidates(const Gemm& x, const Described& g,
                                                                   std::size_t workspace_bytes, int most) {
  MatmulPreference pref(workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> h(static_cast<std::size_t>(most));
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt_.get(), g.desc.get(), g.la.get(), g.lb.get(), g.ld.get(), g.ld.get(),
                                              pref.get(), most, h.data(), &found));
  if (found == 0)
    throw Error("cuBLASLt has no algorithm for the GEMM m=" + std::to_string(x.m) + " n=" + std::to_string(x.n) +
                " k=" + std::to_string(x.k) + " epilogue " + std::to_string(static_cast<int>(x.epilogue)));
  h.resize(static_cast<std::size_t>(found));
  return h;
}

void Bf16Gemms::launch(const Gemm& x, const Described& g, const cublasLtMatmulAlgo_t& algo, void* workspace,
                       std::size_t workspace_bytes, cudaStream_t s) {
  CUBLAS_CHECK(cublasLtMatmul(lt_.get(), g.desc.get(), &x.alpha, x.a, g.la.get(), x.b, g.lb.get(), &g.beta, g.c,
                              g.ld.get(), x.d, g.ld.get(), &algo, workspace, workspace_bytes, s));
}

void Bf16Gemms::run(const Gemm& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s) {
  const Described g(x);
  auto it = algos_.find(g.key);
  if (it == algos_.end()) it = algos_.emplace(g.key, candidates(x, g, workspace_bytes, 1).front().algo).first;
  launch(x, g, it->second, workspace, workspace_bytes, s);
}

// Each candidate warmed once, then timed over kTunedRuns back-to-back runs between two events.
void Bf16Gemms::tune(const Gemm& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s, int most) {
  constexpr int kTunedRuns = 8;
  const Described g(x);
  gpu::Event start, stop;
  float best_ms = 0.f;
  for (const cublasLtMatmulHeuristicResult_t& h : candidates(x, g, workspace_bytes, most)) {
    launch(x, g, h.algo, workspace, workspace_bytes, s);
    CUDA_CHECK(cudaEventRecord(start.get(), s));
    for (int i = 0; i < kTunedRuns; ++i) launch(x, g, h.algo, workspace, workspace_bytes, s);
    CUDA_CHECK(cudaEventRecord(stop.get(), s));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (algos_.count(g.key) == 0 || ms < best_ms) {
      algos_[g.key] = h.algo;
      best_ms = ms;
    }
  }
}

// The three GEMMs of a linear layer with PyTorch's [out, in] weights and row-major [rows, in]
// activations, written in cuBLAS's column-major terms: a row-major matrix is its transpose there.
// Forward: y^T = W x^T.
Gemm linear_gemm(bf16* y, const bf16* x, const bf16* w, int in, int out, long long rows) {
  Gemm gm;
  gm.ta = CUBLAS_OP_T;
  gm.m = out;
  gm.n = static_cast<int>(rows);
  gm.k = in;
  gm.a = w;
  gm.lda = in;
  gm.b = x;
  gm.ldb = in;
  gm.d = y;
  gm.ldd = out;
  return gm;
}

// dW (as [out, in], column-major [in, out]) = x^T dy, summed over the rows; `accumulate` adds
// to what dW holds (the micro-batches after the first of a step).
Gemm weight_grad_gemm(bf16* dw, const bf16* dy, const bf16* x, int in, int out, long long rows, bool accumulate) {
  Gemm gm;
  gm.tb = CUBLAS_OP_T;
  gm.m = in;
  gm.n = out;
  gm.k = static_cast<int>(rows);
  gm.a = x;
  gm.lda = in;
  gm.b = dy;
  gm.ldb = out;
  gm.d = dw;
  gm.ldd = in;
  gm.beta = accumulate ? 1.f : 0.f;
  return gm;
}

// dx^T = W^T dy^T.
Gemm input_grad_gemm(bf16* dx, const bf16* dy, const bf16* w, int in, int out, long long rows) {
  Gemm gm;
  gm.m = in;
  gm.n = static_cast<int>(rows);
  gm.k = out;
  gm.a = w;
  gm.lda = in;
  gm.b = dy;
  gm.ldb = out;
  gm.d = dx;
  gm.ldd = in;
  return gm;
}

}  // namespace scalebench::gpt
