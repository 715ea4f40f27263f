#pragma once
#include <cuda_runtime.h>

#include "common/json.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"

// D = op(A) x op(B) for column-major bf16 matrices (m x k times k x n), fp32 accumulation, on
// cuBLASLt with the algorithm of its heuristic first choice and no workspace: the same algorithm,
// hence the same bits, on every GPU of one model and library version. The burn and checksum
// workloads run it where a result must be reproducible bit for bit.
namespace scalebench::gpu {

class FixedGemm {
 public:
  // op(A) is m x k and op(B) k x n; a transposed operand is stored the other way round.
  FixedGemm(int m, int n, int k, bool transpose_a, bool transpose_b);

  // d = op(a) x op(b) (beta 0), all bf16 and densely packed.
  void run(const void* a, const void* b, void* d, cudaStream_t stream) const;

  double flops() const { return 2.0 * m_ * n_ * k_; }
  // What cuBLASLt chose: {"algo_id", "tile", "stages", "splitk", "reduction", "swizzle", "custom"}.
  Json algorithm() const;

 private:
  int m_, n_, k_;
  LtHandle handle_;
  MatmulDesc desc_;
  MatrixLayout a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace scalebench::gpu
