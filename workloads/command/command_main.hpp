#pragma once
#include <functional>

#include "common/json.hpp"
#include "workloads/command/command_launch.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The command workload (docs/command.md) as scalebench-run runs it, outside mpirun: starts the
// run's program on the GPUs in CUDA_VISIBLE_DEVICES as its `launch` says, echoes its output,
// ends it at the run's timeout, and turns what it printed into records through `emit`: the
// ready-made parser's and the figures'. A program that cannot be found is a skipped record; one
// that exits non-zero or lacks a figure is a failed record with its output's last lines.
// Returns 0, or 3 when the run failed or timed out.
int run_command_workload(const RunRequest& run);

}  // namespace scalebench
