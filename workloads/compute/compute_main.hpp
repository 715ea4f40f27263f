#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

// The run of a compute workload (gemm, conv, rnn) as scalebench-run drives it: one rank per GPU,
// every rank measuring the same point at the same moment, rank 0 reporting. Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::compute {

// The GPU a rank drives (already made current when `measure` is called).
struct DeviceInfo {
  int index = 0;  // CUDA device number within this process
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_clock_mhz = 0;  // the SM clock's maximum (boost)
  std::size_t memory_bytes = 0;
};

struct ComputeWorkload {
  // The points of the run, in order; the same on every rank (a function of the parameters only).
  std::function<std::vector<Json>(const Json& params)> plan;
  // How one operation's work at `point` becomes the figure.
  std::function<Throughput(const Json& params, const Json& point)> throughput;
  // Measures `point` on this rank's GPU. An exception fails the point on this rank (the run goes
  // on with the next point); a point the GPU cannot run returns status "skipped" with the reason.
  std::function<RankOutcome(const Json& params, const Json& point, const DeviceInfo& gpu)> measure;
  // Library versions added to every record's environment, e.g. {"cublas": "13.0.2"}.
  Json versions = Json::object();
};

// A plan's points as ComputeWorkload::plan returns them: each point's to_json(), in order.
template <typename Points>
std::vector<Json> points_json(const Points& points) {
  std::vector<Json> out;
  for (const auto& p : points) out.push_back(p.to_json());
  return out;
}

// The run scalebench-run hands over, on WorkloadRun's shell: every record to run.emit (which a
// workload may wrap: peaks, records derived from a throughput's, a table of its own made from
// the records when it sets run.records), or with run.records false a table on stdout. Returns
// the exit code: 0, or 3 when a point failed (wrong output or an error).
int run_compute_workload(const RunRequest& run, const ComputeWorkload& workload);

}  // namespace scalebench::compute
