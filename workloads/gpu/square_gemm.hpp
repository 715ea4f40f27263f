#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/json.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"

// C = A x B for n x n bf16 matrices with fp32 accumulation on cuBLASLt, on buffers it owns, with the
// algorithm of cuBLASLt's heuristic first choice and no workspace: the same algorithm, hence the
// same bits, on every GPU of one model and library version. Shared by the burn and checksum
// workloads.
namespace scalebench::gpu {

class SquareGemm {
 public:
  explicit SquareGemm(int n);

  // A and B from the deterministic pattern of `seed` (bf16_pattern.cuh).
  void fill_inputs(std::uint64_t seed, cudaStream_t stream);
  void run(cudaStream_t stream);

  const void* output() const { return c_.get(); }
  std::size_t elements() const { return static_cast<std::size_t>(n_) * n_; }
  double flops() const { return 2.0 * n_ * n_ * n_; }
  // What cuBLASLt chose: {"algo_id", "tile", "stages", "splitk", "reduction", "swizzle", "custom"}.
  Json algorithm() const;

 private:
  int n_;
  DeviceBuffer a_, b_, c_;
  gpu::LtHandle handle_;
  gpu::MatmulDesc desc_;
  gpu::MatrixLayout layout_;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace scalebench::gpu
