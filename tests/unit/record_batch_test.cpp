#include "coordinator/record_batch.hpp"

#include "common/record.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scalebench {
namespace {

const std::string kRecord =
    R"({"schema_version":1,"run_id":7,"experiment":"caf\u00e9 \"x\" é","workload":"collective","metric":"busbw","unit":"GB/s",)"
    R"("status":"ok","value":12.5,"params":{"op":"all_reduce"},"placement":{"nodes":1,"gpus":-2},)"
    R"("stats":{"n":3,"samples":[1,2,3]},"environment":{"mpi":"Open MPI"},"variant":"caf\u00e9 \"x\" é","note":"n"})";

TEST(RecordBatch, KeepsEachRecordsTextAndReadsItsFields) {
  const std::string body = R"( {"attempt": 2, "records": [ {"seq": 0, "record": )" + kRecord + R"(},)" +
                           R"({"record": {"a": [1, {"b": null}]}, "seq": 18446744073709551615} ] } )";
  RecordBatch batch;
  ASSERT_EQ(read_record_batch(body, batch), "");
  EXPECT_EQ(batch.attempt, 2);
  ASSERT_EQ(batch.records.size(), 2u);
  EXPECT_EQ(batch.records[0].seq, 0);
  EXPECT_EQ(batch.records[0].text, kRecord);  // stored as sent
  const Json full = Json::parse(kRecord);
  const Json& f = batch.records[0].fields;
  EXPECT_EQ(f["run_id"], 7);
  EXPECT_EQ(f["value"], 12.5);
  EXPECT_EQ(f["experiment"], full["experiment"]);  // escapes decoded as nlohmann decodes them
  EXPECT_EQ(f["stats"], Json::object());           // an ok record needs one: an empty stand-in
  // Optional fields of the right kind add nothing to validation: not built.
  for (const char* absent : {"params", "placement", "environment", "variant", "note"})
    EXPECT_FALSE(f.contains(absent)) << absent;
  EXPECT_EQ(batch.records[0].whole(), full);
  EXPECT_EQ(batch.records[1].text, R"({"a": [1, {"b": null}]})");
}

TEST(RecordBatch, RecordsOfOneSeriesHaveOneSeriesText) {
  auto body = [](const std::string& size, const std::string& value) {
    return R"({"attempt":1,"records":[{"seq":0,"record":{"experiment":"e","workload":"collective","metric":"busbw",)"
           R"("unit":"GB/s","value":)" +
           value + R"(,"params":{"op":"all_reduce"},"point":{"size":)" + size + R"(},"stats":{"n":1}}}]})";
  };
  RecordBatch a, b, c;
  ASSERT_EQ(read_record_batch(body("1024", "1.5"), a), "");
  ASSERT_EQ(read_record_batch(body("1024", "2.5"), b), "");
  ASSERT_EQ(read_record_batch(body("2048", "1.5"), c), "");
  EXPECT_EQ(a.records[0].series_text, b.records[0].series_text) << "the value is not part of it";
  EXPECT_NE(a.records[0].series_text, c.records[0].series_text);
  EXPECT_EQ(a.records[0].series_text,
            "\"e\"\x01\"collective\"\x01\x01\"busbw\"\x01\"GB/s\"\x01{\"op\":\"all_reduce\"}\x01\x01{\"size\":1024}");
}

// RawRecord::fields holds only part of a record: validation must read the same of it as of the
// whole record, for good records and for each kind of bad one.
TEST(RecordBatch, FieldsValidateAsTheWholeRecord) {
  const std::string good =
      R"({"schema_version":1,"run_id":7,"experiment":"e","workload":"collective","metric":"busbw","unit":"GB/s",)"
      R"("status":"ok","value":12.5,"params":{"op":"all_reduce"},"point":{"size":4},)"
      R"("placement":{"nodes":1,"ranks":8,"ranks_per_node":8,"gpus":8,"hosts":["a"]},"stats":{"n":3},)"
      R"("variant":"v","transport":"","better":"higher","reason":"","time":"t","round":1,"correctness":{}})";
  const std::vector<std::pair<std::string, std::string>> changes{
      {"", ""},
      {R"("schema_version":1)", R"("schema_version":2)"},
      {R"("schema_version":1)", R"("schema_version":"1")"},
      {R"("run_id":7)", R"("run_id":7.5)"},
      {R"("experiment":"e")", R"("experiment":3)"},
      {R"("status":"ok")", R"("status":"fine")"},
      {R"("status":"ok")", R"("status":"failed")"},
      {R"("value":12.5)", R"("value":"12.5")"},
      {R"("value":12.5)", R"("value":null)"},
      {R"("params":{"op":"all_reduce"})", R"("params":[1])"},
      {R"("point":{"size":4})", R"("point":4)"},
      {R"("stats":{"n":3})", R"("stats":"n")"},
      {R"("ranks":8,)", R"("ranks":"8",)"},
      {R"("gpus":8,)", R"("gpus":8.5,)"},
      {R"("placement":{)", R"("placement":[{)"},
      {R"("variant":"v")", R"("variant":["v"])"},
      {R"("time":"t")", R"("time":0)"},
      {R"("round":1)", R"("round":true)"},
      {R"(,"correctness":{})", R"(,"correctness":1,"status":"skipped")"},
      {R"("round":1)", R"("round":1e0)"},
      // Duplicate keys: the last one counts, as nlohmann reads them.
      {R"("variant":"v")", R"("variant":5,"variant":"v")"},
      {R"("variant":"v")", R"("variant":"v","variant":5)"},
      {R"("gpus":8,)", R"("gpus":"8","gpus":8,)"},
      {R"("gpus":8,)", R"("gpus":8,"gpus":"8",)"},
      {R"("params":{"op":"all_reduce"})", R"("params":{},"params":1)"},
  };
  for (const auto& [from, to] : changes) {
    std::string record = good;
    if (!from.empty()) record.replace(record.find(from), from.size(), to);
    if (to.rfind(R"("placement":[{)", 0) == 0) record.replace(record.find(R"(]},"stats")"), 3, "]}],");
    RecordBatch batch;
    ASSERT_EQ(read_record_batch(R"({"attempt":1,"records":[{"seq":0,"record":)" + record + "}]}", batch), "") << record;
    EXPECT_EQ(validate_record(batch.records[0].fields), validate_record(Json::parse(record))) << record;
  }
}

TEST(RecordBatch, RejectsWhatIsNotJson) {
  for (const std::string bad :
       {R"({"attempt": 1, "records": [})", R"({"attempt": 01, "records": []})", R"({"attempt": 1, "records": []} x)",
        "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\x01\"}}]}",
        "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\xC0\xAF\"}}]}",      // overlong UTF-8
        "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\xED\xA0\x80\"}}]}",  // a surrogate
        R"({"attempt": 1, "records": [{"seq": 0, "record": {"s": "\ud800"}}]})",  // a lone high surrogate
        R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": 1.}}]})", R"({"attempt": tru, "records": []})"}) {
    RecordBatch batch;
    EXPECT_EQ(read_record_batch(bad, batch), "body is not valid JSON") << bad;
    EXPECT_FALSE(Json::accept(bad)) << "nlohmann accepts " << bad;
  }
}

TEST(RecordBatch, NamesTheEnvelopesProblem) {
  RecordBatch batch;
  EXPECT_EQ(read_record_batch("[1]", batch), "body is not a JSON object");
  EXPECT_EQ(read_record_batch("", batch), "records: missing field 'attempt' (an integer)");
  EXPECT_EQ(read_record_batch(R"({"attempt": "1", "records": []})", batch),
            "records: field 'attempt' must be an integer, not string");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": 5}]})", batch),
            "records[0]: field 'record' must be an object, not number");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": {}, "x": 1}]})", batch),
            "records[0]: unknown field 'x' (known: seq, record)");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": {}})", batch),
            "records: field 'records' must be an array, not object");
  const std::string deep = R"({"attempt": 1, "records": [{"seq": 0, "record": {"p": )" + std::string(100, '[') +
                           std::string(100, ']') + "}}]}";
  EXPECT_EQ(read_record_batch(deep, batch), "JSON nested deeper than 64 levels");
}

}  // namespace
}  // namespace scalebench
