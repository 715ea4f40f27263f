#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

// A stored record read by field: what report, cli and accept read of a record (docs/records.md),
// typed once here, so that a malformed record fails with the field's name wherever it is read.
namespace scalebench {

// Where the run ran; a count the record lacks is absent.
struct RecordPlacement {
  std::optional<long long> nodes, ranks, ranks_per_node, gpus;
  std::vector<std::string> hosts;
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
  const Json& references() const;

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
  const Json* json_;
};

// A field by its dotted path ("details.checksum", "point.size", "link.peak_GBps"); null when absent.
Json field_at(const Json& record, const std::string& path);

}  // namespace scalebench
