// libFuzzer target: the body of POST /api/v1/runs/{id}/records as the coordinator reads it:
// read_record_batch's one-pass reader (checked against nlohmann::json, which reads the stored
// text back: each must accept what the other does, and what it keeps of each record must be what
// a full parse gives: the judgement of a record it vouches for, else the fields validation
// reads), then each record validated, evaluated against references and fed to the /metrics
// gauges. A record the validator accepts must never make the later steps throw.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/record_batch.hpp"
#include "experiment/spec.hpp"
#include "record/record.hpp"

namespace {
using namespace scalebench;

const std::vector<Reference>& references() {
  static const std::vector<Reference> refs = parse_experiment(R"(name: fuzz
workload: collective
params: {op: all_reduce}
references:
  busbw: {target: 100, lower: -0.05, unit: GB/s, where: {size: 64MiB, gpus: 8, op: all_reduce, variant: a}}
  time: {target: 10, upper: 0.1, unit: us}
)",
                                                              "fuzz.yaml")
                                                 .references;
  return refs;
}

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Metrics metrics;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  RecordBatch batch;
  const std::string problem = read_record_batch(body, batch);
  const bool json_ok = body.empty() || Json::accept(body);
  // nlohmann also takes a leading byte order mark, and a NUL byte as the end of the input; the
  // reader refuses both (stricter is safe: what it accepts must read back).
  const bool quirk = body.substr(0, 3) == "\xEF\xBB\xBF" || body.find('\0') != std::string_view::npos;
  if (problem.empty() && !json_ok) bug("read_record_batch accepted what nlohmann rejects");
  if (problem == "body is not valid JSON" && json_ok && !quirk) bug("read_record_batch rejected valid JSON");
  if (!problem.empty()) return 0;
  // Each record, with its seq, as nlohmann reads the body (the last of duplicate keys).
  const Json parsed = Json::parse(body);
  const Json& entries = parsed["records"];
  if (entries.size() != batch.records.size()) bug("record count differs");
  if (batch.attempt != parsed["attempt"].get<int>()) bug("attempt differs");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (batch.records[i].seq != entries[i]["seq"].get<long long>()) bug("seq differs");
    if (batch.records[i].whole() != entries[i]["record"]) bug("record differs");
  }
  for (const auto& raw : batch.records) {
    // The stored text reads back, and the fields are the record's own.
    Json full = Json::parse(raw.text);
    if (full != raw.whole()) bug("whole() differs");
    const std::string problem_of_record = validate_record(full);
    if (raw.vouched) {
      // Vouched for: valid, and what the coordinator reads of it is the record's own.
      if (!problem_of_record.empty()) bug("vouched for an invalid record: " + problem_of_record);
      if (!raw.fields.is_null()) bug("fields built for a vouched record");
      if (raw.run_id != full["run_id"].get<long long>()) bug("run_id differs");
      if (full["experiment"] != raw.experiment) bug("experiment differs");
      const bool ok = full["status"] == "ok";
      if (ok != raw.ok_value.has_value()) bug("ok differs");
      if (ok && *raw.ok_value != full["value"].get<double>()) bug("value differs");
    } else {
      // Otherwise the fields validation reads are the record's own.
      std::size_t kept = 0;
      for (const auto& [key, value] : full.items()) {
        const std::optional<Json> want = record_field_kept(key, value);
        if (!want) continue;
        ++kept;
        if (!raw.fields.contains(key) || raw.fields[key] != *want) bug("field '" + key + "' differs");
      }
      if (kept != raw.fields.size()) bug("field count differs");
    }
    // What the coordinator judges of a record is what validation says of the whole record.
    if (raw.problem() != problem_of_record) bug("validation differs: " + raw.problem());
    if (!problem_of_record.empty()) continue;
    if (raw.run_id_value() != full["run_id"].get<long long>() || raw.run_id_text() != full["run_id"].dump())
      bug("run_id differs");
    for (const auto& ref : references()) (void)evaluate_reference(ref, full);
    if (raw.vouched)
      metrics.record_ingested(raw.experiment, raw.ok_value, raw.series_text, [&raw] { return raw.whole(); });
    else
      metrics.record_ingested(raw.fields, raw.series_text, [&raw] { return raw.whole(); });
  }
  (void)metrics.text();
  return 0;
}
