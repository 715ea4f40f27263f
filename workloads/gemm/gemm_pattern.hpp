#pragma once
#include <cstdint>

#include "workloads/gpu/host_device.hpp"

// The gemm inputs, a pure function of each element's indices so that the GPU fill kernels and the
// host fp64 reference compute the very same values, and only sampled output elements travel back.
namespace scalebench::gemm {

// Element (row, col) of op(A) (which = 0) or op(B) (which = 1): an integer in [-8, 8] from a hash
// of its indices (no structure a kernel could shortcut; mean about 0, so sums grow like sqrt(k)).
// Every integer of magnitude <= 8 has at most 3 significant bits: times 1/8 it is exact in fp8
// e4m3 and e5m2, fp16, bf16, tf32 and wider, and an int8 as it is.
SCALEBENCH_HOST_DEVICE inline int pattern_int(unsigned which, unsigned long long row, unsigned long long col) {
  std::uint32_t h = static_cast<std::uint32_t>(row) * 0x9E3779B1u ^ static_cast<std::uint32_t>(col) * 0x85EBCA77u ^
                    (which + 1u) * 0xC2B2AE3Du ^ static_cast<std::uint32_t>(row >> 32) * 0x27D4EB2Fu ^
                    static_cast<std::uint32_t>(col >> 32) * 0x165667B1u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return static_cast<int>(h % 17u) - 8;
}

// The float precisions' inputs are pattern_int / 8; int8's are pattern_int itself.
constexpr double kFloatInputStep = 0.125;

}  // namespace scalebench::gemm
