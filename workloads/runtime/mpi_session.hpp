#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "workloads/gpu/mpi_comm.hpp"

namespace scalebench {

// MPI for the life of scalebench-run: rank, world size, and the rank's place on its node
// (local rank picks the GPU). Works the same under mpirun and srun.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& hostname() const { return hostname_; }
  std::string library_version() const;

  // Every rank's string, on every rank (hostnames, GPU descriptions).
  std::vector<std::string> all_gather(const std::string& mine) const;
  // Collective: the lowest rank's non-empty problem as "rank R: problem", or empty when no rank has
  // one, so that every rank takes the same way after a step that may fail on some.
  std::string first_problem(const std::string& mine) const;
  double allreduce_sum(double v) const;
  double allreduce_max(double v) const;
  long long allreduce_sum(long long v) const;
  void barrier() const;
  // Ends every rank at once: a failure on one rank must not leave the others waiting forever.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  gpu::MpiComm node_comm_;  // the ranks of this node
  std::string hostname_;
};

}  // namespace scalebench
