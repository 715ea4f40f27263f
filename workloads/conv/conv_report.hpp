#pragma once
#include <string>

#include "common/json.hpp"

// What the conv workload adds to the compute records, and the table scalebench-run prints
// without --emit records. Pure: no CUDA, no MPI.
namespace scalebench::conv {

// Adds `peak` ({value, unit, basis}) and `pct_of_peak` to throughput records: a GPU's own peak
// (its details' peak_tflops, from compute/peak.hpp) for its `throughput`, and the sum of the
// GPUs' peaks for `throughput_total` (records of a point arrive per GPU first, then the total).
// Records without a known peak (an architecture not in the table) are left as they are.
class PeakAnnotator {
 public:
  void annotate(Json& record);

 private:
  std::string point_key_;  // the point the peaks below belong to (without its gpu fields)
  double peak_sum_ = 0;
};

// The table: a header, then one line per record worth a line (per-GPU throughput, the all-GPU
// total and spread, points that did not run); empty for the others (time records).
std::string table_header();
std::string table_line(const Json& record);

}  // namespace scalebench::conv
