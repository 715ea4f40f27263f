#include "workloads/gpu/fixed_gemm.hpp"

#include <string>

#include "common/error.hpp"

namespace scalebench::gpu {

namespace {
int algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  int value = 0;
  std::size_t written = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written));
  return value;
}

cublasOperation_t op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }
}  // namespace

FixedGemm::FixedGemm(int m, int n, int k, bool transpose_a, bool transpose_b)
    : m_(m),
      n_(n),
      k_(k),
      desc_(CUBLAS_COMPUTE_32F, CUDA_R_32F),
      a_(CUDA_R_16BF, transpose_a ? k : m, transpose_a ? m : k, transpose_a ? k : m),
      b_(CUDA_R_16BF, transpose_b ? n : k, transpose_b ? k : n, transpose_b ? n : k),
      d_(CUDA_R_16BF, m, n, m) {
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSA, op(transpose_a));
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSB, op(transpose_b));
  MatmulPreference pref(0);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_.get(), desc_.get(), a_.get(), b_.get(), d_.get(), d_.get(),
                                              pref.get(), 1, &result, &found));
  if (found == 0)
    throw Error("cuBLASLt offers no algorithm for a bf16 GEMM of " + std::to_string(m) + " x " + std::to_string(n) +
                " x " + std::to_string(k));
  algo_ = result.algo;
}

void FixedGemm::run(const void* a, const void* b, void* d, cudaStream_t stream) const {
  const float alpha = 1, beta = 0;
  CUBLAS_CHECK(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, a, a_.get(), b, b_.get(), &beta, d, d_.get(), d,
                              d_.get(), &algo_, nullptr, 0, stream));
}

Json FixedGemm::algorithm() const {
  return Json{{"algo_id", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_ID)},
              {"tile", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID)},
              {"stages", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID)},
              {"splitk", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
              {"reduction", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)},
              {"swizzle", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
              {"custom", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)}};
}

}  // namespace scalebench::gpu
