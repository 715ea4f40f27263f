#include "workloads/gpu/square_gemm.hpp"

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/bf16_pattern.cuh"

namespace scalebench::gpu {

namespace {
constexpr std::size_t kBf16Bytes = 2;

int algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  int value = 0;
  std::size_t written = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written));
  return value;
}
}  // namespace

SquareGemm::SquareGemm(int n)
    : n_(n),
      a_(elements() * kBf16Bytes),
      b_(elements() * kBf16Bytes),
      c_(elements() * kBf16Bytes),
      desc_(CUBLAS_COMPUTE_32F, CUDA_R_32F),
      layout_(CUDA_R_16BF, n, n, n) {
  gpu::MatmulPreference pref(0);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_.get(), desc_.get(), layout_.get(), layout_.get(), layout_.get(),
                                              layout_.get(), pref.get(), 1, &result, &found));
  if (found == 0) throw Error("cuBLASLt offers no algorithm for a " + std::to_string(n) + "^3 bf16 GEMM");
  algo_ = result.algo;
}

void SquareGemm::fill_inputs(std::uint64_t seed, cudaStream_t stream) {
  fill_bf16_pattern(a_.get(), elements(), seed, stream);
  fill_bf16_pattern(b_.get(), elements(), seed + 1, stream);
}

void SquareGemm::run(cudaStream_t stream) {
  const float alpha = 1, beta = 0;
  CUBLAS_CHECK(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, a_.get(), layout_.get(), b_.get(), layout_.get(),
                              &beta, c_.get(), layout_.get(), c_.get(), layout_.get(), &algo_, nullptr, 0, stream));
}

Json SquareGemm::algorithm() const {
  return Json{{"algo_id", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_ID)},
              {"tile", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID)},
              {"stages", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID)},
              {"splitk", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
              {"reduction", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)},
              {"swizzle", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
              {"custom", algo_attribute(algo_, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)}};
}

}  // namespace scalebench::gpu
