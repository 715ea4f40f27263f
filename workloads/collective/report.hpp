#pragma once
#include <cstdio>
#include <vector>

#include "common/json.hpp"
#include "workloads/collective/collective.hpp"
#include "workloads/collective/runner.hpp"

namespace scalebench::collective {

// Measured values into records (time, algbw, busbw per size), kept apart from measuring.
std::vector<Json> point_records(const Json& context, const Config& c, int nranks, const PointResult& p);

// The nccl-tests-style table for people running scalebench-run by hand.
void print_table_header(std::FILE* out, const Config& c, int nranks);
void print_table_row(std::FILE* out, const Config& c, int nranks, const PointResult& p);

}  // namespace scalebench::collective
