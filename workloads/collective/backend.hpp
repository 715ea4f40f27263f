#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "workloads/collective/collective.hpp"

namespace scalebench::collective {

// One way of running collectives (NCCL on GPUs, MPI on host memory). The runner drives the
// measurement; a backend only owns buffers, launches operations and times them its own way.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Why this configuration cannot run here ("" when it can): becomes a skipped record.
  virtual std::string unsupported(const Config& c) const = 0;
  // Buffers for the largest layout of the sweep.
  virtual void allocate(const Config& c, const Layout& largest) = 0;
  // Runs `iters` operations back to back and returns this rank's seconds per operation,
  // measured the backend's way (CUDA events for NCCL, MPI_Wtime for host memory).
  virtual double time_ops(const Config& c, const Layout& l, int iters) = 0;
  // Correctness: writes `input` as this rank's send data, runs the operation once, and returns
  // this rank's output elements (recv_count of them).
  virtual std::vector<std::byte> run_checked(const Config& c, const Layout& l, const std::vector<std::byte>& input) = 0;
};

}  // namespace scalebench::collective
