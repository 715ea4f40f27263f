#pragma once
// How aligned device addresses are, for libraries whose kernels read vectors: cuDNN's graph API,
// its fused batch norm and cuBLASLt assume more alignment than a tensor at an odd offset in a flat
// buffer has, unless told or avoided.
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace scalebench::gpu {

// The largest power of two up to `cap` that divides every address (null ones left out).
inline std::size_t alignment_of(std::initializer_list<const void*> ptrs, std::size_t cap) {
  std::uintptr_t bits = cap;
  for (const void* p : ptrs) bits |= reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::size_t>(bits & (~bits + 1));
}

}  // namespace scalebench::gpu
