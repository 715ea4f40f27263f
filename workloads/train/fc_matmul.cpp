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

void FcMatmul::setup(cublasLtHandle_t lt, compute::Precision p, DType t, bool ta, bool tb, long long m, long long n,
                     long long k, long long lda, long long ldb, long long ldc, std::uint32_t align) {
  desc.emplace(gemm_compute(p), CUDA_R_32F);
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  desc->set(CUBLASLT_MATMUL_DESC_TRANSA, opa);
  desc->set(CUBLASLT_MATMUL_DESC_TRANSB, opb);
  a.emplace(cuda_type(t), ta ? k : m, ta ? m : k, lda);
  b.emplace(cuda_type(t), tb ? n : k, tb ? k : n, ldb);
  c.emplace(cuda_type(t), m, n, ldc);
  gpu::MatmulPreference pref(kWorkspace);
  pref.min_alignment(align);
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc->get(), a->get(), b->get(), c->get(), c->get(), pref.get(), 1,
                                              &r, &found));
  if (found < 1)
    throw Error("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k) + " matmul");
  algo = r.algo;
}

void FcMatmul::run(cublasLtHandle_t lt, const void* A, const void* B, void* C, bool accumulate, void* ws,
                   cudaStream_t s) const {
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(lt, desc->get(), &alpha, A, a->get(), B, b->get(), &beta, C, c->get(), C, c->get(), &algo,
                              ws, kWorkspace, s));
}

}  // namespace scalebench::train
