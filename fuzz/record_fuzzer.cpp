// libFuzzer target: the body of POST /api/v1/runs/{id}/records as the coordinator reads it:
// read_record_batch's one-pass reader (checked against nlohmann::json, which reads the stored
// text back: each must accept what the other does, and each record's fields must be what a full
// parse gives), then each record validated, evaluated against references and fed to the /metrics
// gauges. A record the validator accepts must never make the later steps throw.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "common/record.hpp"
#include "common/spec.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/record_batch.hpp"

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
  for (const auto& raw : batch.records) {
    // The stored text reads back, and the fields are the record's own.
    Json full = Json::parse(raw.text);
    if (full != raw.whole()) bug("whole() differs");
    std::size_t kept = 0;
    for (const auto& [key, value] : full.items()) {
      const std::optional<Json> want = record_field_kept(key, value);
      if (!want) continue;
      ++kept;
      if (!raw.fields.contains(key) || raw.fields[key] != *want) bug("field '" + key + "' differs");
    }
    if (kept != raw.fields.size()) bug("field count differs");
    // What the coordinator keeps of a record validates as the whole record does.
    const std::string problem_of_fields = validate_record(raw.fields);
    if (problem_of_fields != validate_record(full)) bug("validation differs: " + problem_of_fields);
    if (!problem_of_fields.empty()) continue;
    for (const auto& ref : references()) (void)evaluate_reference(ref, full);
    metrics.record_ingested(raw.fields, raw.series_text, [&raw] { return raw.whole(); });
  }
  (void)metrics.text();
  return 0;
}
