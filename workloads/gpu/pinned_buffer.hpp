#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

// Page-locked host memory (cudaHostAlloc, portable: pinned for every GPU of the process, and
// addressable from each through unified addressing). Move-only; the destructor never throws.
// The pages land on the NUMA node of the CPU that allocates them.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaHostAlloc(p_.out(), bytes, cudaHostAllocPortable));
  }
  std::byte* get() const { return static_cast<std::byte*>(p_.get()); }
  std::size_t bytes() const { return p_ ? bytes_ : 0; }

 private:
  UniqueHandle<void*, FreeWith<cudaFreeHost>> p_;
  std::size_t bytes_ = 0;
};

}  // namespace scalebench::gpu
