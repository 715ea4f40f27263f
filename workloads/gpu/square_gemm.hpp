#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/json.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/fixed_gemm.hpp"

// C = A x B for n x n bf16 matrices on buffers it owns, through FixedGemm (the same algorithm,
// hence the same bits, on every GPU of one model). Shared by the burn and checksum workloads.
namespace scalebench::gpu {

class SquareGemm {
 public:
  explicit SquareGemm(int n);

  // A and B from the deterministic pattern of `seed` (bf16_pattern.cuh).
  void fill_inputs(std::uint64_t seed, cudaStream_t stream);
  void run(cudaStream_t stream) { gemm_.run(a_.get(), b_.get(), c_.get(), stream); }

  const void* output() const { return c_.get(); }
  std::size_t elements() const { return static_cast<std::size_t>(n_) * n_; }
  double flops() const { return gemm_.flops(); }
  Json algorithm() const { return gemm_.algorithm(); }

 private:
  int n_;
  DeviceBuffer a_, b_, c_;
  FixedGemm gemm_;
};

}  // namespace scalebench::gpu
