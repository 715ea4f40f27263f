#pragma once
#include <nccl.h>

#include <cstddef>
#include <optional>
#include <string>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/mpi_session.hpp"

// Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// The gradient buffer in NCCL memory that every rank registers as a symmetric window, so that the
// all-reduce may run NCCL's symmetric kernels; when not (`off` says why), the net keeps its own.
// Registering is collective, so it happens only once every rank has its memory. With P2P off those
// kernels would still reach the peers over NVLink, and a PCIe figure would not be one.
class SymmetricGradients {
 public:
  // `off`: why not, decided by the caller (then no rank calls NCCL here).
  SymmetricGradients(const MpiSession& mpi, ncclComm_t comm, std::size_t bytes, std::string off);
  void* buffer() const { return window_ ? memory_->get() : nullptr; }
  const std::string& off() const { return off_; }

 private:
  std::optional<gpu::NcclMemory> memory_;
  std::optional<gpu::NcclWindow> window_;  // destroyed before the memory
  std::string off_;
};

}  // namespace scalebench::train
