#pragma once
// A collective's measured curves, shared by its size charts and tables (collectives.cpp) and its
// scaling chart and model (collective_scaling.cpp).
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "report/build_report.hpp"
#include "report/report_model.hpp"

namespace scalebench::sections {

// One curve: a variant at a worker count (and whatever else varies); for each metric (busbw,
// algbw, time), size -> the records of that point (rounds, repeated runs).
struct Curve {
  std::string variant, extra;
  int workers = 0;
  std::map<std::string, std::map<double, std::vector<const Json*>>> at;
};

// The curves of one chart ("all_reduce float32 sum in-place"), keyed by series name.
struct CollectiveGroup {
  std::string op, title, id;
  std::map<std::string, Curve> curves;
};

using CollectiveGroups = std::map<std::string, CollectiveGroup>;  // by title

// The sized collective records (busbw, algbw and time against message size) of `recs`, grouped.
CollectiveGroups collective_groups(const std::vector<const Json*>& recs, bool gpus);

// busbw at the largest size against the worker count, measured and continued by the alpha-beta
// model fitted on each curve's times, with the model's table; a warning where the continuation
// rests on too few counts or a poor fit.
void add_collective_scaling(Section& sec, const CollectiveGroups& groups, bool gpus, const ReportOptions& opt);

}  // namespace scalebench::sections
