#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/mllog/mllog.hpp"

namespace scalebench {

// Records for an MLPerf-style log (parser: mllog), each on `context` (record_context's fields):
// time_to_train (s, the run_start to run_stop time of the runs whose status is success, with
// point.seeds, point.reached and point.counts by MLPerf's rule; failed when the rule is not met),
// eval_accuracy (the last per run) and epochs (per run that reached the target). An output
// without a run_start is an Error (the program logged nothing MLPerf-style).
std::vector<Json> mllog_records(const Json& context, const std::vector<mllog::Run>& runs);

}  // namespace scalebench
