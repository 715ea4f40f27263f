#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/runtime/launch_options.hpp"

namespace scalebench {

class MpiSession;

// One run as scalebench-run hands it to a workload's entry point, `int run_<name>_workload(const
// RunRequest&)` (cmake/workload.cmake). Returns the exit code: 0, or 3 when a
// point failed or a check found wrong data.
struct RunRequest {
  const MpiSession* mpi = nullptr;  // null for a workload declared outside_mpi
  long long run_id = 0;
  Json spec;             // the RunSpec as JSON (workload, params, env, repetitions, ...)
  Json run_file;         // the whole --spec file (run_id, attempt, spec, hosts); null ad hoc
  bool records = false;  // every record to `emit` as it completes; else a table on stdout
  MpirunOptions mpirun;  // how this node starts MPI programs (from the agent)
  std::function<void(const Json&)> emit;
};

}  // namespace scalebench
