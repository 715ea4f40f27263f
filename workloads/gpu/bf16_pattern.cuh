#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// Deterministic bf16 data and an order-independent hash of it, for work whose result must be the
// same bit for bit on every GPU (the checksum workload) and for loads whose power draw must not
// depend on zeros (the burn workload).
namespace scalebench::gpu {

// x[i] = a value in [-1, 1) drawn from (seed, i) by a fixed hash, rounded to bf16.
void fill_bf16_pattern(void* x, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// Sum over i of mix(i, bits of x[i]) modulo 2^64: any flipped bit changes it, and the sum does not
// depend on the order in which threads add. Synchronises the stream.
std::uint64_t hash_bf16(const void* x, std::size_t n, cudaStream_t stream);

}  // namespace scalebench::gpu
