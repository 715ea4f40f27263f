#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <tuple>

#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpu/cublaslt_handles.hpp"

// bf16 GEMMs through cuBLASLt, as the training step and the decoder run them: a GEMM's
// description, the three GEMMs of a linear layer, and a runner that asks cuBLASLt's heuristic once
// per GEMM shape and keeps its algorithm.
namespace scalebench::gpt {

// What every GEMM may use as cuBLASLt's workspace.
constexpr std::size_t kWorkspaceBytes = 32u << 20;

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

// The three GEMMs of a linear layer with PyTorch's [out, in] weights and row-major [rows, in]
// activations: y[rows, out] = x[rows, in] W^T; dW[out, in] (+)= dy^T x over `rows`; dx[rows, in] = dy W.
Gemm linear_gemm(bf16* y, const bf16* x, const bf16* w, int in, int out, long long rows);
Gemm weight_grad_gemm(bf16* dw, const bf16* dy, const bf16* x, int in, int out, long long rows, bool accumulate);
Gemm input_grad_gemm(bf16* dx, const bf16* dy, const bf16* w, int in, int out, long long rows);

class Bf16Gemms {
 public:
  // Enqueues `x` on `s`; the first GEMM of a shape asks the heuristic (Error when it has nothing).
  void run(const Gemm& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s);
  cublasLtHandle_t lt() const { return lt_.get(); }

 private:
  gemm::LtHandle lt_;
  std::map<std::tuple<int, int, int, int, int, int, int, int, int, int, int, int>, cublasLtMatmulAlgo_t> algos_;
};

}  // namespace scalebench::gpt
