#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// nccl-tests' printed table (all_reduce_perf and its siblings, 2.x), read back so that its figures
// go into the same store, ratios and reports as scalebench's own: one row per message size with
// the out-of-place and in-place time (us), algbw and busbw (GB/s) and wrong-element counts.
struct NcclTestsSide {
  double time_us = 0, algbw = 0, busbw = 0;
  std::optional<long long> wrong;  // null when nccl-tests printed N/A (check off or not applicable)
};

struct NcclTestsRow {
  std::uint64_t size = 0, count = 0;
  std::string type, redop;
  int root = -1;
  NcclTestsSide out_of_place, in_place;
};

struct NcclTestsOutput {
  std::string version;  // "2.19.6"
  std::string test;     // "all_reduce_perf"
  int threads = 0, gpus_per_thread = 0, iters = 0, warmup_iters = 0;
  bool cuda_graph = false;
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw;  // "# Avg bus bandwidth"
  std::optional<long long> out_of_bounds;
};

// Parses the text nccl-tests writes to stdout. Lines it does not know (NCCL INFO, MPI chatter)
// are passed over; a table row that is cut short or has a field that is not a number is an Error
// naming its line. An output without a single row is an Error too (the test did not run).
NcclTestsOutput parse_nccl_tests_text(const std::string& text);

// Parses the file nccl-tests writes with -J FILE.json (format version 3, nccl-tests 2.17 and
// later): the same rows as the text. Its environment list is not read (it may hold secrets).
NcclTestsOutput parse_nccl_tests_json(const std::string& text);

// Records for the rows of `out`, as the collective workload writes them (time, algbw, busbw per
// size; out of place, or in place when `in_place`), each on `context` (record_context's fields),
// with point.size and point.count, and status failed when nccl-tests counted wrong elements.
std::vector<Json> nccl_tests_records(const Json& context, const NcclTestsOutput& out, bool in_place = false);

}  // namespace scalebench
