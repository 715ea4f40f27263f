#pragma once
#include <cuda_runtime.h>

#include <cstdint>

// Host-side launchers of the copy workload's kernels (copy_kernels.cu). Each launches on
// `stream`, which must belong to the current device, and throws on a launch error.
namespace scalebench::copy {

// Most threads per block the SM copy kernel is built for (copy.hpp's kSmThreads must match).
inline constexpr int kSmCopyThreads = 512;

// Copies `bytes` from src to dst `loops` times in one kernel: 16-byte loads and stores, several
// in flight per thread, grid-stride over the buffer (the last bytes % 16 byte by byte). src and
// dst may be on any GPU the current one can address (peer access) or pinned host memory.
void launch_sm_copy(void* dst, const void* src, std::uint64_t bytes, int loops, int blocks, int threads,
                    cudaStream_t stream);

// Blocks per SM that the copy kernel can keep resident on the current device at kSmCopyThreads.
int sm_copy_occupancy();

// nvbandwidth's blocking kernel: one thread that spins until *latch (pinned host memory) is
// non-zero, so that everything queued behind it starts at once. Gives up after `timeout_ns`
// (GPU global timer) and then sets *timed_out, which marks the sample as not held back.
void launch_spin(volatile int* latch, volatile int* timed_out, std::uint64_t timeout_ns, cudaStream_t stream);

// Writes the pattern for `seed` (copy_pattern.hpp) into `bytes` at p.
void launch_fill(void* p, std::uint64_t bytes, std::uint32_t seed, cudaStream_t stream);

// Adds to *counter (device memory of the current device) the number of 4-byte words (and
// trailing bytes) at p that differ from the pattern for `seed`.
void launch_count_mismatches(const void* p, std::uint64_t bytes, std::uint32_t seed, unsigned long long* counter,
                             cudaStream_t stream);

}  // namespace scalebench::copy
