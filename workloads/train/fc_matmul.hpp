#pragma once
#include <cublasLt.h>

#include <cstdint>
#include <optional>

#include "workloads/compute/precision.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/train/train_kernels.cuh"

// The matmuls of the net's fully connected layers, through cuBLASLt. Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// One cuBLASLt matmul, C(m x n) = op(A) op(B) + beta C, column-major, its algorithm chosen once.
struct FcMatmul {
  static constexpr std::size_t kWorkspace = 32u << 20;  // bytes of the workspace run() is given
  std::optional<gpu::MatmulDesc> desc;
  std::optional<gpu::MatrixLayout> a, b, c;
  cublasLtMatmulAlgo_t algo{};
  // `align`: the bytes every matrix's start is a multiple of (a layer's weights and gradients lie
  // at its offset in the flat parameter buffers).
  void setup(cublasLtHandle_t lt, compute::Precision p, DType t, bool ta, bool tb, long long m, long long n,
             long long k, long long lda, long long ldb, long long ldc, std::uint32_t align);
  void run(cublasLtHandle_t lt, const void* A, const void* B, void* C, bool accumulate, void* ws, cudaStream_t s) const;
};

}  // namespace scalebench::train
