#include "workloads/train/fc_matmul.hpp"

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"

namespace scalebench::train {

namespace {
using gpu::cuda_type;

// fp32: cuBLAS pedantic (no TF32); tf32: TF32 Tensor Cores for fp32 data; fp16/bf16: fp32 sums.
cublasComputeType_t gemm_compute(compute::Precision p) {
  return p == compute::Precision::kFp32   ? CUBLAS_COMPUTE_32F_PEDANTIC
         : p == compute::Precision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
}
}  // namespace

void FcMatmul::setup(cublasLtHandle_t lt, compute::Precision p, DType t, bool ta, bool tb, long long m_, long long n_,
                     long long k_, long long lda, long long ldb, long long ldc) {
  m = m_, n = n_, k = k_;
  desc.emplace(gemm_compute(p), CUDA_R_32F);
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  desc->set(CUBLASLT_MATMUL_DESC_TRANSA, opa);
  desc->set(CUBLASLT_MATMUL_DESC_TRANSB, opb);
  a.emplace(cuda_type(t), ta ? k : m, ta ? m : k, lda);
  b.emplace(cuda_type(t), tb ? n : k, tb ? k : n, ldb);
  c.emplace(cuda_type(t), m, n, ldc);
  gpu::MatmulPreference pref(kWorkspace);
  std::vector<cublasLtMatmulHeuristicResult_t> found(8);
  int returned = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc->get(), a->get(), b->get(), c->get(), c->get(), pref.get(),
                                              static_cast<int>(found.size()), found.data(), &returned));
  if (returned < 1)
    throw Error("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k) + " matmul");
  candidates.clear();
  for (int i = 0; i < returned; ++i) candidates.push_back(found[static_cast<std::size_t>(i)].algo);
  algo.reset();
}

void FcMatmul::run(cublasLtHandle_t lt, const void* A, const void* B, void* C, bool accumulate, void* ws,
                   cudaStream_t s) {
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const auto launch = [&](const cublasLtMatmulAlgo_t& x) {
    return cublasLtMatmul(lt, desc->get(), &alpha, A, a->get(), B, b->get(), &beta, C, c->get(), C, c->get(), &x, ws,
                          kWorkspace, s);
  };
  if (algo) {
    CUBLAS_CHECK(launch(*algo));
    return;
  }
  for (const cublasLtMatmulAlgo_t& x : candidates) {
    const cublasStatus_t rc = launch(x);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED) continue;  // refused before anything was queued
    CUBLAS_CHECK(rc);
    algo = x;
    return;
  }
  throw Error("cuBLASLt refused all " + std::to_string(candidates.size()) +
              " algorithms it offered for the fc matmul m=" + std::to_string(m) + " n=" + std::to_string(n) +
              " k=" + std::to_string(k));
}

}  // namespace scalebench::train
