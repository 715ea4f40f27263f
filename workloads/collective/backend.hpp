#pragma once
#include <cstddef>
#include <optional>
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
  // Ranks of the collective in all, and the ones this process drives (one per GPU it owns).
  virtual int nranks() const = 0;
  virtual std::vector<int> local_ranks() const = 0;
  // Why this configuration cannot run here ("" when it can): becomes a skipped record.
  virtual std::string unsupported(const Config& c) const = 0;
  // Buffers for the largest layout of the sweep.
  virtual void allocate(const Config& c, const Layout& largest) = 0;
  // Runs `iters` operations back to back and returns this process's seconds per operation (the
  // slowest of its GPUs), measured the backend's way (CUDA events for NCCL, MPI_Wtime on host).
  virtual double time_ops(const Config& c, const Layout& l, int iters) = 0;
  // Correctness: writes inputs[k] as the send data of local_ranks()[k], runs the operation once,
  // and returns each local rank's output elements (recv_count of them), in the same order.
  using Buffers = std::vector<std::vector<std::byte>>;
  virtual Buffers run_checked(const Config& c, const Layout& l, const Buffers& inputs) = 0;
  // Correctness where the data lives: writes the inputs, runs the operation once and counts the
  // wrong output elements of this process's ranks without moving buffers to the host. nullopt
  // when the backend has no such check (the runner then uses run_checked).
  virtual std::optional<long long> count_wrong_in_place(const Config&, const Layout&) { return std::nullopt; }
};

}  // namespace scalebench::collective
