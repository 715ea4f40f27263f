#include "workloads/gpt/bf16_gemm.hpp"

#include <string>

#include "common/error.hpp"

namespace scalebench::gpt {

using gemm::MatmulDesc;
using gemm::MatmulPreference;
using gemm::MatrixLayout;

void Bf16Gemms::run(const Gemm& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s) {
  // C is D unless given (the residual add in place, or accumulating into a gradient); a GEMM
  // with a C and no beta adds it whole.
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
  // Everything the heuristic is given, C in place or apart included: one query per GEMM shape.
  const auto key = std::make_tuple(static_cast<int>(x.ta), static_cast<int>(x.tb), x.m, x.n, x.k, x.lda, x.ldb, x.ldd,
                                   x.batch, static_cast<int>(x.epilogue), with_c ? 1 : 0, x.c && x.c != x.d ? 1 : 0);
  auto it = algos_.find(key);
  if (it == algos_.end()) {
    MatmulPreference pref(workspace_bytes);
    cublasLtMatmulHeuristicResult_t h{};
    int found = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt_.get(), desc.get(), la.get(), lb.get(), ld.get(), ld.get(),
                                                pref.get(), 1, &h, &found));
    if (found == 0)
      throw Error("cuBLASLt has no algorithm for the GEMM m=" + std::to_string(x.m) + " n=" + std::to_string(x.n) +
                  " k=" + std::to_string(x.k) + " epilogue " + std::to_string(static_cast<int>(x.epilogue)));
    it = algos_.emplace(key, h.algo).first;
  }
  const float beta = with_c ? (x.beta != 0.f ? x.beta : 1.f) : 0.f;
  CUBLAS_CHECK(cublasLtMatmul(lt_.get(), desc.get(), &x.alpha, x.a, la.get(), x.b, lb.get(), &beta, c, ld.get(), x.d,
                              ld.get(), &it->second, workspace, workspace_bytes, s));
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
