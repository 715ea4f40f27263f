#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

// A stored record read by field: what report, cli and accept read of a record (docs/records.md),
// typed once here, so that a malformed record fails with the field's name wherever it is read.
namespace scalebench {

// One GPU of the run (one rank on host memory): placement.devices' rank and host.
struct RecordDevice {
  std::optional<long long> rank;
  std::string host;
};

// Where the run ran; a count the record lacks is absent.
struct RecordPlacement {
  std::optional<long long> nodes, ranks, ranks_per_node, gpus;
  std::vector<std::string> hosts;
  std::vector<RecordDevice> devices;  // only in records from scalebench-run
};

// One entry of references: the bounds that are set and the outcome (pass or fail).
struct RecordReference {
  std::optional<double> target, lower_bound, upper_bound;
  std::string unit, outcome;
};

// One record, typed. It refers to the Json it was read from, which must outlive it. Fields a
// record lacks read as the schema's defaults (empty text, round 1, no value, empty blocks).
class RecordView {
 public:
  // Throws Error naming the field ("record 12: 'placement.gpus' must be an integer") when a field
  // the schema types has another type.
  explicit RecordView(const Json& record);

  const Json& json() const { return *json_; }

  // Identity.
  std::optional<long long> record_id, run_id;  // record_id: the store's, absent before it is stored
  std::string experiment, workload, variant, transport;
  long long round = 1;
  // The figure.
  std::string metric, unit, better;
  std::optional<double> value;  // null on a record without a measurement
  std::string status, reason, time;
  RecordPlacement placement;

  // The blocks, each an object (an empty one when absent); references an array.
  const Json& params() const { return block("params"); }
  const Json& point() const { return block("point"); }
  const Json& stats() const { return block("stats"); }
  const Json& correctness() const { return block("correctness"); }
  const Json& environment() const { return block("environment"); }
  const Json& details() const { return block("details"); }
  const Json& references() const;
  // references, typed: Error naming the entry's field ("references[1].target") of another type.
  std::vector<RecordReference> reference_checks() const;

  // A field by its dotted path ("details.step_ms", "link.path", "pct_of_peak"), typed: absent when
  // the record lacks it or it is null; Error naming the record and the field when it, or an object
  // on its path, has another type.
  std::optional<double> number_at(const std::string& path) const;
  std::optional<long long> integer_at(const std::string& path) const;
  std::optional<std::string> text_at(const std::string& path) const;
  // Whether the record has the field at `path` (null reads as absent).
  bool has(const std::string& path) const { return find(path) != nullptr; }
  // stats.samples: absent when the record has none, else each timed sample; a null sample (NaN, as
  // JSON writes it) is left out, anything else but a number is an Error.
  std::optional<std::vector<double>> samples() const;

  bool ok() const { return status == "ok"; }
  // A measured figure, not a run's outcome alone (metric "run").
  bool is_figure() const { return metric != "run"; }
  // point.size in bytes, when the point has one.
  std::optional<std::uint64_t> size() const;
  // stats.cv, when the samples gave one (null: one sample, spread unknown).
  std::optional<double> cv() const;
  // Whether the correctness check passed; absent when the point was not checked.
  std::optional<bool> passed() const;
  // Whether a reference check of the record failed.
  bool reference_failed() const;
  // The node: point.host, else the one host of a single-node run, else "" (a run over several nodes).
  std::string host() const;
  // The GPU index: point.gpu, else -1 (the node, or the run, as a whole).
  int gpu() const;
  // The GPU model: point.model, else the run's only entry of environment.gpu_models, else "".
  std::string model() const;

 private:
  const Json& block(const char* key) const;
  // The field at `path`, or null when absent or null; Error when an object on the path is not one.
  const Json* find(const std::string& path) const;
  [[noreturn]] void fail(const std::string& field, const char* want) const;
  const Json* json_;
};

// A field by its dotted path ("details.checksum", "point.size", "link.peak_GBps"); null when absent.
Json field_at(const Json& record, const std::string& path);

}  // namespace scalebench
