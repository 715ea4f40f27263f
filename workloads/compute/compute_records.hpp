#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

// The records of the compute workloads (gemm, conv, rnn): each point is measured on every GPU of
// the run at the same time, one rank per GPU, and reported per GPU and for all of them together,
// with the spread between GPUs (a GPU that throttles when its neighbours work shows up there).
// Pure: no CUDA, no MPI.
namespace scalebench::compute {

// What one rank measured at one point.
struct RankOutcome {
  std::string status = "ok";      // ok, failed (ran, but wrong or an error) or skipped (could not run here)
  std::string reason;             // why not ok
  std::vector<double> seconds;    // seconds per operation, one entry per timed sample
  long long wrong = -1;           // output elements off the reference; -1 when not checked
  long long checked = 0;          // output elements compared
  Json details = Json::object();  // what this rank adds to the point: algorithm chosen, memory used

  Json to_json() const;
  static RankOutcome from_json(const Json& j);
};

// How a point's work becomes its figure: throughput = work / seconds * scale, in `unit`.
struct Throughput {
  double work = 0;   // per operation: FLOPs (integer ops for int8), or samples
  double scale = 1;  // 1e-12 for TFLOP/s
  std::string unit;  // "TFLOP/s", "TOP/s", "samples/s"
};

// The records of one point from every rank's outcome (in rank order = GPU order):
//  - per GPU (point.gpu = rank): `time` (us, lower) and `throughput` (higher), with that GPU's
//    correctness and its `details`;
//  - with two GPUs or more, all GPUs at once (point.gpu = "all"): `throughput_total`, whose
//    samples sum the GPUs' figures of the same timed sample, and `gpu_spread`, 100 x (max - min) /
//    median of the per-GPU medians (%, lower is better);
//  - when any rank skipped or failed before measuring: one status record with the point and the
//    first reason instead.
std::vector<Json> point_records(const Json& context, const Json& point, const Throughput& tp,
                                const std::vector<RankOutcome>& ranks);

// One line of the table scalebench-run prints without --emit records: per-GPU medians, total and
// spread, or the reason the point did not run.
std::string table_row(const Json& point, const Throughput& tp, const std::vector<RankOutcome>& ranks);

}  // namespace scalebench::compute
