#pragma once
#include <type_traits>
#include <utility>

namespace scalebench::gpu {

// The value of an empty T: Free::empty() where `Free` declares one (MPI's MPI_COMM_NULL is no null
// pointer), else T{}.
template <typename T, typename Free, typename = void>
struct EmptyHandle {
  static T value() { return T{}; }
};
template <typename T, typename Free>
struct EmptyHandle<T, Free, std::void_t<decltype(Free::empty())>> {
  static T value() { return Free::empty(); }
};

// Move-only owner of one library handle (a CUDA stream, a cuDNN descriptor, an NCCL communicator,
// an MPI communicator, ...): `Free{}(h)` releases a handle that is not empty (EmptyHandle), and
// must not throw. Classes that own a
// handle hold one of these and write no move or destroy code of their own.
template <typename T, typename Free>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(T h, Free free = Free{}) : h_(h), free_(std::move(free)) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, empty())), free_(std::move(o.free_)) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, empty());
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
    if (h_ != empty()) free_(std::exchange(h_, empty()));
  }
  explicit operator bool() const { return h_ != empty(); }

 private:
  static T empty() { return EmptyHandle<T, Free>::value(); }
  T h_ = empty();
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
