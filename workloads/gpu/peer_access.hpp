#pragma once
#include <cuda_runtime.h>

#include <string>

#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::gpu {

// Whether GPUs a and b can map each other's memory, both ways (NVLink or a PCIe switch that
// allows it).
inline bool can_access_peer(int a, int b) {
  int ab = 0, ba = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, a, b));
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, b, a));
  return ab && ba;
}

// Peer access between two GPUs, both ways, for the guard's life (cudaDeviceEnablePeerAccess).
// Undoes only what it enabled itself, so nested or pre-existing access is left as it was. Leaves
// the current device changed; callers set the device they need. Neither copyable nor movable.
class PeerAccess {
 public:
  PeerAccess(int a, int b) : a_(a), b_(b) {
    a_enabled_ = enable(a, b);
    try {
      b_enabled_ = enable(b, a);
    } catch (...) {
      disable(a_enabled_, a, b);
      throw;
    }
  }
  ~PeerAccess() {
    disable(b_enabled_, b_, a_);
    disable(a_enabled_, a_, b_);
  }
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;

 private:
  // true when this call enabled it; false when it already was.
  static bool enable(int from, int to) {
    CUDA_CHECK(cudaSetDevice(from));
    const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
    if (rc == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // not an error here; do not leave it for the next check to find
      return false;
    }
    CUDA_CHECK(rc);
    return true;
  }
  static void disable(bool enabled, int from, int to) noexcept {
    if (!enabled) return;
    if (cudaSetDevice(from) == cudaSuccess) cudaDeviceDisablePeerAccess(to);
    (void)cudaGetLastError();
  }

  int a_, b_;
  bool a_enabled_ = false, b_enabled_ = false;
};

}  // namespace scalebench::gpu
