#pragma once
#include <functional>
#include <string>
#include <vector>

#include "workloads/collective/backend.hpp"
#include "workloads/runtime/mpi_session.hpp"

namespace scalebench::collective {

// One measured message size: per-operation seconds of each sample (averaged over processes, as
// nccl-tests does), why sampling stopped, and the correctness check's count of wrong elements.
struct PointResult {
  Layout layout;
  int iters = 0;
  std::vector<double> seconds;
  std::string stop;      // repetitions | time_cap | noise
  long long wrong = -1;  // -1: not checked
};

// Warm-up, timed samples under the stopping rule, then the check, for every size of the sweep.
// `on_point` is called on every rank as each size completes (rank 0 reports it).
void run_sweep(Backend& backend, const Config& c, const MpiSession& mpi,
               const std::function<void(const PointResult&)>& on_point);

}  // namespace scalebench::collective
