#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The copy workload (docs/copy.md) as scalebench-run runs it: one process drives every GPU in
// CUDA_VISIBLE_DEVICES. `spec` is the RunSpec as JSON (workload, params, env, repetitions, ...).
// With `records`, every record goes to `emit` as its case completes; without, an
// nvbandwidth-style matrix goes to stdout at the end. Rank 0 measures; any other ranks only take
// part in the environment capture and wait. Returns the exit code: 0, or 3 when a case failed
// or a check found wrong data. Built only with SCALEBENCH_HAVE_CUDA.
int run_copy_workload(const RunRequest& run);

}  // namespace scalebench
