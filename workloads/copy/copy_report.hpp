#pragma once
#include <cstdio>
#include <vector>

#include "common/json.hpp"
#include "workloads/copy/copy.hpp"

namespace scalebench::copy {

// Measured cases into records, kept apart from measuring. `context` is record_context() with
// the resolved params and the environment. Per direction one "bandwidth" record (params gain
// src and dst: a GPU index or "host"); a bidirectional case adds "bandwidth_sum" with the first
// direction's src and dst. A skipped or failed case gives the same records without values.
std::vector<Json> case_records(const Json& context, const Config& c, const CaseResult& r);

// Whether a case counts against the run's exit code: it failed, or a check found wrong data.
bool case_failed(const CaseResult& r);

// nvbandwidth-style matrices of the median bandwidth, then every case that is not ok, for
// people running scalebench-run by hand.
void print_table(std::FILE* out, const Config& c, int gpus, const std::vector<CaseResult>& results);

}  // namespace scalebench::copy
