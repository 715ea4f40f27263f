#pragma once
#include <string>

#include "common/json.hpp"

// What the gemm workload adds to the compute records, and its table. Pure: no CUDA.
namespace scalebench::gemm {

// The table scalebench-run prints without --emit records: one line per GPU per point (throughput,
// % of peak, time, check, algorithm), one for all GPUs together (total, spread), one for a point
// that did not run. `format_row` returns "" for records that make no line of their own.
std::string table_header();
class TableFormatter {
 public:
  std::string format_row(const Json& record);

 private:
  double time_us_ = 0;  // the time record's median, printed on its throughput record's line
  double total_ = 0;
  std::string total_unit_;
};

}  // namespace scalebench::gemm
