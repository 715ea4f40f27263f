#pragma once
#include <string>

#include "common/json.hpp"

// Shared by the workloads whose records carry an arithmetic peak per GPU (gemm, hbm). Pure: no
// CUDA.
namespace scalebench::compute {

// Puts each GPU's arithmetic peak on the records of a point: the measuring rank leaves it in its
// records' details ({"value", "unit", "basis"}); `finish` moves it to the record's `peak`, with
// `pct_of_peak` = 100 x value / peak on `throughput` records, and gives `throughput_total` the sum
// of the point's per-GPU peaks. Records must come in point_records' order (per GPU, then total).
class PeakAnnotator {
 public:
  void finish(Json& record);

 private:
  Json point_;  // the point (without its gpu) whose GPU peaks are summed
  double sum_ = 0;
  std::string unit_;
};

}  // namespace scalebench::compute
