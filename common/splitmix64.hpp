#pragma once
// splitmix64 (Steele, Lea and Flood): a 64-bit counter hash, for host data that must depend on a
// seed and an index only (prompts, test data, shuffles), not on the order it is made in.
#include <cstdint>

namespace scalebench {

// The hash of z: splitmix64's output for the state z (z advanced by the golden ratio, then mixed).
constexpr std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The generator's next value; advances `state`.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  const std::uint64_t out = splitmix64(state);
  state += 0x9e3779b97f4a7c15ull;
  return out;
}

}  // namespace scalebench
