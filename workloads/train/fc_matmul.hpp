#pragma once
#include <cublasLt.h>

#include <optional>
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/train/train_kernels.cuh"

// The matmuls of the net's fully connected layers, through cuBLASLt. Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// One cuBLASLt matmul, C(m x n) = op(A) op(B) + beta C, column-major. cuBLASLt can offer
// algorithms it then refuses at launch (NASNet's fc in fp16), so setup keeps its candidates and
// the first run launches them in order, keeping the first that runs.
struct FcMatmul {
  static constexpr std::size_t kWorkspace = 32u << 20;  // bytes of the workspace run() is given
  std::optional<gpu::MatmulDesc> desc;
  std::optional<gpu::MatrixLayout> a, b, c;
  std::vector<cublasLtMatmulAlgo_t> candidates;
  std::optional<cublasLtMatmulAlgo_t> algo;  // chosen at the first run
  long long m = 0, n = 0, k = 0;
  void setup(cublasLtHandle_t lt, compute::Precision p, DType t, bool ta, bool tb, long long m, long long n,
             long long k, long long lda, long long ldb, long long ldc);
  // Throws Error naming the shape where cuBLASLt refuses every candidate.
  void run(cublasLtHandle_t lt, const void* A, const void* B, void* C, bool accumulate, void* ws, cudaStream_t s);
};

}  // namespace scalebench::train
