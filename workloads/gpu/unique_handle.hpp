#pragma once
#include <utility>

namespace scalebench::gpu {

// Move-only owner of one library handle (a CUDA stream, a cuDNN descriptor, an NCCL communicator,
// ...): `Free{}(h)` releases a handle that is not `T{}`, and must not throw. Classes that own a
// handle hold one of these and write no move or destroy code of their own.
template <typename T, typename Free>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(T h, Free free = Free{}) : h_(h), free_(std::move(free)) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, T{})), free_(std::move(o.free_)) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, T{});
      free_ = std::move(o.free_);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  T get() const { return h_; }
  // For a create call that writes the handle: only on an empty owner.
  T* out() { return &h_; }
  void reset() noexcept {
    if (h_ != T{}) free_(std::exchange(h_, T{}));
  }
  explicit operator bool() const { return h_ != T{}; }

 private:
  T h_{};
  Free free_{};
};

// A free function as `Free`: UniqueHandle<cudaEvent_t, FreeWith<cudaEventDestroy>>. The
// function's status is ignored: a destructor has no one to report it to.
template <auto Fn>
struct FreeWith {
  template <typename T>
  void operator()(T h) const noexcept {
    Fn(h);
  }
};

}  // namespace scalebench::gpu
