#pragma once
#include <cstdint>

#include "workloads/gpu/host_device.hpp"

// The data the correctness check writes into a source buffer and expects in its destination.
// Shared by the fill and compare kernels (nvcc) and the unit tests (host compiler).
namespace scalebench::copy {

// Word `index` (the 4 bytes at offset 4*index) of the pattern for `seed`: a splitmix64 hash, so
// that a word copied to the wrong offset, or not copied at all, reads differently.
SCALEBENCH_HOST_DEVICE inline std::uint32_t pattern_word(std::uint64_t index, std::uint32_t seed) {
  std::uint64_t z = index + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(seed) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::uint32_t>(z);
}

// Byte `offset` of the same pattern (little-endian words), for the last bytes of a buffer whose
// size is not a multiple of 4.
SCALEBENCH_HOST_DEVICE inline std::uint8_t pattern_byte(std::uint64_t offset, std::uint32_t seed) {
  return static_cast<std::uint8_t>(pattern_word(offset / 4, seed) >> (8 * (offset % 4)));
}

// Seeds of the source pattern and of what the destination holds before the checked copy.
inline constexpr std::uint32_t kSourceSeed = 0xBAADF00Du;
inline constexpr std::uint32_t kPoisonSeed = 0xCAFEBABEu;

}  // namespace scalebench::copy
