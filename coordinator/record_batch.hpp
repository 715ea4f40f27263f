#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// One entry of a POST /api/v1/runs/{id}/records body: its seq, the record's JSON text exactly as
// sent (what the store keeps), and what the coordinator reads of it, with no JSON built for it
// in the usual case.
//
// The reading pass notes the text of each field validate_record reads. When those texts show
// that the record is valid (every field of its kind, in plain spellings: schema_version 1, a
// run_id that fits 64 bits, a status and experiment without escapes...), the record is
// `vouched` for and run_id, experiment and ok_value hold what the coordinator needs. Otherwise
// `fields` holds what validate_record needs to give its answer, with no more built than that
// (record_field_kept says what). Either way problem() is validate_record's answer for the whole
// record (fuzz/record_fuzzer.cpp and tests/unit/coordinator/record_batch_test.cpp check).
struct RawRecord {
  long long seq = 0;
  std::string_view text;
  bool vouched = false;
  // When vouched: the record's run_id, experiment (its text: it has no escapes), and its value
  // when its status is ok (validation then makes it a number).
  long long run_id = 0;
  std::string_view experiment;
  std::optional<double> ok_value;
  // When not vouched: the fields validate_record reads.
  Json fields;
  // The texts of the fields that name the record's /metrics series (experiment, workload,
  // variant, metric, unit, params, placement, point), as sent, joined by \x01 (which JSON text
  // cannot hold): records of one series have the same, so /metrics finds its gauges by it.
  std::string series_text;

  // Empty when the record is valid, else what is wrong: validate_record's answer.
  std::string problem() const;
  // The run the record names (valid records only), and as its JSON text.
  long long run_id_value() const;
  std::string run_id_text() const;
  // The whole record as JSON (parsed from `text`), for what reads more than the above:
  // references, and /metrics labels of a series it has not seen.
  Json whole() const { return Json::parse(text); }
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

// What RawRecord::fields holds of a record's top-level field `key` with value `value`: nothing for
// a field validate_record does not read, nor for an optional field of the kind it must have (a
// string variant, transport, better, reason or time; an object params, point, env_overrides or
// environment; an integer round; a placement whose counts are integers, else only its counts);
// an empty object for an object stats; else the value itself. validate_record gives the same
// answer for these fields as for the whole record (fuzz/record_fuzzer.cpp checks).
std::optional<Json> record_field_kept(std::string_view key, const Json& value);

}  // namespace scalebench
