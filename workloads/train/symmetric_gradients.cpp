#include "workloads/train/symmetric_gradients.hpp"

#include <cstdlib>
#include <exception>

namespace scalebench::train {

SymmetricGradients::SymmetricGradients(const MpiSession& mpi, ncclComm_t comm, std::size_t bytes, std::string off)
    : off_(std::move(off)) {
  if (!off_.empty()) return;
  if (const char* p2p = std::getenv("NCCL_P2P_DISABLE"); p2p && std::string(p2p) == "1") {
    off_ = "NCCL_P2P_DISABLE=1: NCCL's symmetric kernels would reach the peers over NVLink anyway";
    return;
  }
  std::string error;
  try {
    memory_.emplace(bytes);
  } catch (const std::exception& e) {
    error = std::string("ncclMemAlloc for the gradients: ") + e.what();
  }
  off_ = mpi.first_problem(error);
  if (!off_.empty()) {
    memory_.reset();
    return;
  }
  window_.emplace(comm, memory_->get(), bytes);
}

}  // namespace scalebench::train
