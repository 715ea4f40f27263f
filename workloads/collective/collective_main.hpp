#pragma once
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The collective workload as scalebench-run runs it: NCCL on the run's GPUs (backend nccl, built
// with CUDA only) or MPI on host memory, over the size sweep; with `records`, every point's
// records to `emit`, else nccl-tests' table on stdout. A transport the placed GPUs cannot offer
// is a skipped record. Returns 0, or 3 when a check found wrong data or NCCL connected through
// another transport than the variant asked for.
int run_collective_workload(const RunRequest& run);

}  // namespace scalebench
