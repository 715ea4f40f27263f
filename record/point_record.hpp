#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

// One metric of one measured point, typed: what a workload measured, kept apart from how it is
// printed. Every workload writes its point records through PointRecord::to_json, so that the
// record format (docs/records.md) is written in one place.
namespace scalebench {

// The correctness block: not checked (passed and wrong null), or the wrong output elements summed
// over ranks, with how many elements were compared where the workload counts them.
struct Correctness {
  bool checked = false;
  long long wrong = 0;
  std::optional<long long> elements;
  static Correctness unchecked() { return {}; }
  static Correctness counted(long long wrong, std::optional<long long> elements = std::nullopt) {
    return {true, wrong, elements};
  }
  Json to_json() const;
};

// The stats block: the summary of `samples` (each timed sample, in the record's unit), the samples
// themselves and why sampling stopped.
Json stats_json(const std::vector<double>& samples, const std::string& stop);

struct PointRecord {
  Json point;  // what was measured: size, shape, GPU, ...
  std::string metric, unit, better;
  // No samples: a point that was not measured (value null, no stats block).
  std::vector<double> samples;
  std::string stop;  // repetitions, time_cap, noise, ...
  Correctness correctness;
  std::string status = "ok", reason;

  // The record: the run's `context` (record_context) with this point's fields after it; value is
  // the samples' median; time is now.
  Json to_json(const Json& context) const;
};

}  // namespace scalebench
