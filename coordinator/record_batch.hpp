#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// One entry of a POST /api/v1/runs/{id}/records body: its seq, the record's JSON text exactly as
// sent (what the store keeps), and the record's top-level fields that the coordinator reads
// (validation, references, /metrics), with the bulky objects whose content it does not read
// (stats, environment, env_overrides, correctness, link) stood in for by empty objects.
struct RawRecord {
  long long seq = 0;
  std::string_view text;
  Json fields;
  // The texts of the fields that name the record's /metrics series (experiment, workload,
  // variant, metric, unit, params, placement, point), as sent, joined by \x01 (which JSON text
  // cannot hold): records of one series have the same, so /metrics finds its gauges by it.
  std::string series_text;
};

struct RecordBatch {
  int attempt = 0;
  std::vector<RawRecord> records;
};

// Reads a records body without building a JSON tree of every record: one strict pass checks the
// whole body is valid JSON (RFC 8259, UTF-8, nesting at most `max_depth`) and finds each record's
// text. Returns "" and fills `out` (whose views point into `body`), or the problem, worded as
// the other routes word theirs ("body is not valid JSON", "records: unknown field ...").
std::string read_record_batch(std::string_view body, RecordBatch& out, int max_depth = 64);

// The record fields kept whole in RawRecord::fields: everything but these.
bool record_field_is_bulky(std::string_view key);

}  // namespace scalebench
