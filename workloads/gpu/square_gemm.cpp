#include "workloads/gpu/square_gemm.hpp"

#include "workloads/gpu/bf16_pattern.cuh"

namespace scalebench::gpu {

namespace {
constexpr std::size_t kBf16Bytes = 2;
}  // namespace

SquareGemm::SquareGemm(int n)
    : n_(n),
      a_(elements() * kBf16Bytes),
      b_(elements() * kBf16Bytes),
      c_(elements() * kBf16Bytes),
      gemm_(n, n, n, false, false) {}

void SquareGemm::fill_inputs(std::uint64_t seed, cudaStream_t stream) {
  fill_bf16_pattern(a_.get(), elements(), seed, stream);
  fill_bf16_pattern(b_.get(), elements(), seed + 1, stream);
}

}  // namespace scalebench::gpu
