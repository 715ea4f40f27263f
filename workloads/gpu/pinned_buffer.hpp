#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::gpu {

// Page-locked host memory (cudaHostAlloc, portable: pinned for every GPU of the process, and
// addressable from each through unified addressing). Move-only; the destructor never throws.
// The pages land on the NUMA node of the CPU that allocates them.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocPortable));
  }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      if (p_) cudaFreeHost(p_);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace scalebench::gpu
