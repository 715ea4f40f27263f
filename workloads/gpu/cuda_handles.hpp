#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/nccl_check.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

// Move-only owners of CUDA and NCCL handles (UniqueHandle frees them; destructors never throw).
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(s_.out(), cudaStreamNonBlocking)); }
  // Lower numbers run first where kernels wait for SMs (cudaDeviceGetStreamPriorityRange).
  explicit Stream(int priority) { CUDA_CHECK(cudaStreamCreateWithPriority(s_.out(), cudaStreamNonBlocking, priority)); }
  cudaStream_t get() const { return s_.get(); }

 private:
  UniqueHandle<cudaStream_t, FreeWith<cudaStreamDestroy>> s_;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(e_.out())); }
  cudaEvent_t get() const { return e_.get(); }

 private:
  UniqueHandle<cudaEvent_t, FreeWith<cudaEventDestroy>> e_;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaMalloc(p_.out(), bytes));
  }
  std::byte* get() const { return static_cast<std::byte*>(p_.get()); }
  std::size_t bytes() const { return p_ ? bytes_ : 0; }

 private:
  UniqueHandle<void*, FreeWith<cudaFree>> p_;
  std::size_t bytes_ = 0;
};

// Device memory of another process on this node, mapped into this one (cudaIpcOpenMemHandle; peer
// access enabled as needed); unmapped on destruction, before its owner frees it.
class IpcMapping {
 public:
  explicit IpcMapping(const cudaIpcMemHandle_t& handle) {
    CUDA_CHECK(cudaIpcOpenMemHandle(p_.out(), handle, cudaIpcMemLazyEnablePeerAccess));
  }
  std::byte* get() const { return static_cast<std::byte*>(p_.get()); }

 private:
  UniqueHandle<void*, FreeWith<cudaIpcCloseMemHandle>> p_;
};

// An instantiated CUDA graph, ready to launch (the captured graph itself is freed at once).
// `flags` are cudaGraphInstantiate's (cudaGraphInstantiateFlagUseNodePriority, say).
class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraph_t graph, unsigned long long flags = 0) {
    const cudaError_t err = cudaGraphInstantiate(e_.out(), graph, flags);
    cudaGraphDestroy(graph);
    CUDA_CHECK(err);
  }
  cudaGraphExec_t get() const { return e_.get(); }

 private:
  UniqueHandle<cudaGraphExec_t, FreeWith<cudaGraphExecDestroy>> e_;
};

// A communicator over all ranks; destroyed collectively. Created inside ncclGroupStart/End when
// one process initialises several GPUs' ranks at once (the init completes at ncclGroupEnd).
class NcclComm {
 public:
  NcclComm(int nranks, ncclUniqueId id, int rank) { NCCL_CHECK(ncclCommInitRank(c_.out(), nranks, id, rank)); }
  // With NCCL's options (e.g. maxCTAs, so that a collective overlapped with compute takes few SMs).
  NcclComm(int nranks, ncclUniqueId id, int rank, ncclConfig_t config) {
    NCCL_CHECK(ncclCommInitRankConfig(c_.out(), nranks, id, rank, &config));
  }
  ncclComm_t get() const { return c_.get(); }

 private:
  UniqueHandle<ncclComm_t, FreeWith<ncclCommDestroy>> c_;
};

// Memory from ncclMemAlloc (the CUDA virtual-memory allocation NCCL can map into its peers): what a
// symmetric window needs.
class NcclMemory {
 public:
  explicit NcclMemory(std::size_t bytes) { NCCL_CHECK(ncclMemAlloc(p_.out(), bytes)); }
  void* get() const { return p_.get(); }

 private:
  UniqueHandle<void*, FreeWith<ncclMemFree>> p_;
};

// A buffer registered with every rank of a communicator as a symmetric window (NCCL 2.27+), so that
// collectives on it may use NCCL's symmetric kernels. Registering and deregistering are collective:
// every rank makes and destroys its window together.
class NcclWindow {
 public:
  NcclWindow(ncclComm_t comm, void* buf, std::size_t bytes) : w_(nullptr, Deregister{comm}) {
    NCCL_CHECK(ncclCommWindowRegister(comm, buf, bytes, w_.out(), NCCL_WIN_COLL_SYMMETRIC));
  }

 private:
  struct Deregister {
    ncclComm_t comm = nullptr;
    void operator()(ncclWindow_t w) const noexcept { ncclCommWindowDeregister(comm, w); }
  };
  UniqueHandle<ncclWindow_t, Deregister> w_;
};

}  // namespace scalebench::gpu
