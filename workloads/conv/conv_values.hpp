#pragma once
#include <cstdint>

#include "workloads/gpu/host_device.hpp"

// The values the conv workload feeds cuDNN, computed alike on the GPU (to fill a tensor) and on
// the host (to recompute sampled outputs in fp64), so no tensor has to travel back for the check.
// Plain C++ with CUDA qualifiers when nvcc compiles it.
namespace scalebench::conv {

// Which tensor a value belongs to (the seed of its values).
enum class TensorRole : std::uint32_t { kInput = 1, kFilter = 2, kOutputGrad = 3 };

// Element `logical` (its index in N,C,H,W order, K,C,R,S for a filter, whatever the memory
// layout) of tensor `role`: one of -1, -0.75, ..., 0.75, 1. Quarters are exact in fp16, bf16, tf32
// and fp32, so every precision computes on the same numbers; products are multiples of 1/16 and
// their sums stay exact in fp32 far beyond the reduction lengths of real layers.
SCALEBENCH_HOST_DEVICE inline float grid_value(TensorRole role, std::uint64_t logical) {
  std::uint64_t z = logical * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(role) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z % 9) - 4) * 0.25f;
}

// Root mean square of grid_value: sqrt((2 * (1 + 4 + 9 + 16) / 16) / 9).
constexpr double kGridRms = 0.6454972243679028;
// Mean absolute value of grid_value: 2 x (0.25 + 0.5 + 0.75 + 1) / 9.
constexpr double kGridMeanAbs = 5.0 / 9.0;

}  // namespace scalebench::conv
