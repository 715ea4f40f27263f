#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <utility>

#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::gpu {

// Move-only owners of CUDA and NCCL handles; destructors never throw.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  // Lower numbers run first where kernels wait for SMs (cudaDeviceGetStreamPriorityRange).
  explicit Stream(int priority) { CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, priority)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaMalloc(&p_, bytes));
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (p_) cudaFree(p_);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Device memory of another process on this node, mapped into this one (cudaIpcOpenMemHandle; peer
// access enabled as needed); unmapped on destruction, before its owner frees it.
class IpcMapping {
 public:
  explicit IpcMapping(const cudaIpcMemHandle_t& handle) {
    CUDA_CHECK(cudaIpcOpenMemHandle(&p_, handle, cudaIpcMemLazyEnablePeerAccess));
  }
  ~IpcMapping() {
    if (p_) cudaIpcCloseMemHandle(p_);
  }
  IpcMapping(IpcMapping&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(p_); }

 private:
  void* p_ = nullptr;
};

// An instantiated CUDA graph, ready to launch (the captured graph itself is freed at once).
// `flags` are cudaGraphInstantiate's (cudaGraphInstantiateFlagUseNodePriority, say).
class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraph_t graph, unsigned long long flags = 0) {
    const cudaError_t err = cudaGraphInstantiate(&e_, graph, flags);
    cudaGraphDestroy(graph);
    CUDA_CHECK(err);
  }
  ~GraphExec() {
    if (e_) cudaGraphExecDestroy(e_);
  }
  GraphExec(GraphExec&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    if (this != &o) {
      if (e_) cudaGraphExecDestroy(e_);
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return e_; }

 private:
  cudaGraphExec_t e_ = nullptr;
};

// A communicator over all ranks; destroyed collectively. Created inside ncclGroupStart/End when
// one process initialises several GPUs' ranks at once (the init completes at ncclGroupEnd).
class NcclComm {
 public:
  NcclComm(int nranks, ncclUniqueId id, int rank) { NCCL_CHECK(ncclCommInitRank(&c_, nranks, id, rank)); }
  // With NCCL's options (e.g. maxCTAs, so that a collective overlapped with compute takes few SMs).
  NcclComm(int nranks, ncclUniqueId id, int rank, ncclConfig_t config) {
    NCCL_CHECK(ncclCommInitRankConfig(&c_, nranks, id, rank, &config));
  }
  ~NcclComm() {
    if (c_) ncclCommDestroy(c_);
  }
  NcclComm(NcclComm&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return c_; }

 private:
  ncclComm_t c_ = nullptr;
};

// Memory from ncclMemAlloc (the CUDA virtual-memory allocation NCCL can map into its peers): what a
// symmetric window needs.
class NcclMemory {
 public:
  explicit NcclMemory(std::size_t bytes) { NCCL_CHECK(ncclMemAlloc(&p_, bytes)); }
  ~NcclMemory() {
    if (p_) ncclMemFree(p_);
  }
  NcclMemory(const NcclMemory&) = delete;
  NcclMemory& operator=(const NcclMemory&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

// A buffer registered with every rank of a communicator as a symmetric window (NCCL 2.27+), so that
// collectives on it may use NCCL's symmetric kernels. Registering and deregistering are collective:
// every rank makes and destroys its window together.
class NcclWindow {
 public:
  NcclWindow(ncclComm_t comm, void* buf, std::size_t bytes) : comm_(comm) {
    NCCL_CHECK(ncclCommWindowRegister(comm, buf, bytes, &w_, NCCL_WIN_COLL_SYMMETRIC));
  }
  ~NcclWindow() {
    if (w_) ncclCommWindowDeregister(comm_, w_);
  }
  NcclWindow(const NcclWindow&) = delete;
  NcclWindow& operator=(const NcclWindow&) = delete;

 private:
  ncclComm_t comm_ = nullptr;
  ncclWindow_t w_ = nullptr;
};

}  // namespace scalebench::gpu
