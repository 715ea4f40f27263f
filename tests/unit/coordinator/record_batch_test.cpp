#include "coordinator/record_batch.hpp"

#include "record/record.hpp"

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
  // Its experiment has escapes: not vouched for, its fields are built instead.
  EXPECT_FALSE(batch.records[0].vouched);
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
  EXPECT_EQ(batch.records[1].seq, -1) << "a seq beyond int64 is read as nlohmann's get<long long> reads it";
}

// A valid record in plain spellings (what agents send) is judged from the texts of its fields,
// with nothing built: the coordinator reads its run id, experiment and value from the batch.
TEST(RecordBatch, VouchesForPlainValidRecords) {
  const std::string ok =
      R"({"schema_version":1,"run_id":7,"experiment":"e 1","workload":"collective","metric":"busbw","unit":"GB/s",)"
      R"("status":"ok","value":12,"params":{"op":"all_reduce"},"placement":{"nodes":1,"gpus":8,"hosts":["a"]},)"
      R"("stats":{"n":3},"variant":"v","round":2,"note":[1]})";
  const std::string failed =
      R"({"schema_version":1,"run_id":-3,"experiment":"e","workload":"w","metric":"run","unit":"",)"
      R"("status":"failed","value":null,"reason":"it broke"})";
  RecordBatch batch;
  ASSERT_EQ(
      read_record_batch(
          R"({"attempt":1,"records":[{"seq":4,"record":)" + ok + R"(},{"record":)" + failed + R"(,"seq":5}]})", batch),
      "");
  ASSERT_EQ(batch.records.size(), 2u);
  const RawRecord& a = batch.records[0];
  EXPECT_TRUE(a.vouched);
  EXPECT_TRUE(a.fields.is_null()) << "nothing built";
  EXPECT_EQ(a.problem(), "");
  EXPECT_EQ(a.seq, 4);
  EXPECT_EQ(a.run_id_value(), 7);
  EXPECT_EQ(a.run_id_text(), "7");
  EXPECT_EQ(a.experiment, "e 1");
  EXPECT_EQ(a.ok_value, 12.0);
  const RawRecord& b = batch.records[1];
  EXPECT_TRUE(b.vouched);
  EXPECT_EQ(b.seq, 5);
  EXPECT_EQ(b.run_id_value(), -3);
  EXPECT_FALSE(b.ok_value) << "not an ok record";
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
      // Spellings the texts alone do not judge: the built fields do, with the same answer.
      {R"("schema_version":1)", R"("schema_version":1.0)"},
      {R"("schema_version":1)", R"("schema_version":4294967297)"},
      {R"("schema_version":1)", R"("schema_version":2,"schema_version":1)"},
      {R"("run_id":7)", R"("run_id":9223372036854775808)"},
      {R"("run_id":7)", R"("run_id":18446744073709551616)"},
      {R"("run_id":7)", R"("run_id":-0)"},
      {R"("status":"ok")", R"("status":"ok")"},
      {R"("status":"ok")", R"("status":"ok")"},
      {R"("experiment":"e")", R"("experiment":"é")"},
      {R"("value":12.5)", R"("value":-0)"},
      {R"("value":12.5)", R"("value":18446744073709551616)"},
      {R"("round":1)", R"("round":18446744073709551615)"},
      {R"("round":1)", R"("round":18446744073709551616)"},
      {R"("gpus":8,)", R"("gpus":"8",)"},
      {R"("stats":{"n":3})", R"("stats":{"n":3},"stats":null)"},
      {R"("stats":{"n":3},)", ""},
  };
  for (const auto& [from, to] : changes) {
    std::string record = good;
    if (!from.empty()) record.replace(record.find(from), from.size(), to);
    if (to.rfind(R"("placement":[{)", 0) == 0) record.replace(record.find(R"(]},"stats")"), 3, "]}],");
    RecordBatch batch;
    ASSERT_EQ(read_record_batch(R"({"attempt":1,"records":[{"seq":0,"record":)" + record + "}]}", batch), "") << record;
    const RawRecord& raw = batch.records[0];
    const Json whole = Json::parse(record);
    EXPECT_EQ(raw.problem(), validate_record(whole)) << record;
    if (!raw.problem().empty()) continue;
    EXPECT_EQ(raw.run_id_value(), whole["run_id"].get<long long>()) << record;
    EXPECT_EQ(raw.run_id_text(), whole["run_id"].dump()) << record;
    if (raw.vouched) {
      EXPECT_EQ(Json(raw.experiment), whole["experiment"]) << record;
      EXPECT_EQ(raw.ok_value.has_value(), whole["status"] == "ok") << record;
      if (raw.ok_value) {
        EXPECT_EQ(*raw.ok_value, whole["value"].get<double>()) << record;
      }
    }
  }
}

TEST(RecordBatch, RejectsWhatIsNotJson) {
  for (const std::string& bad : std::vector<std::string>{
           R"({"attempt": 1, "records": [})", R"({"attempt": 01, "records": []})", R"({"attempt": 1, "records": []} x)",
           "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\x01\"}}]}",
           "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\xC0\xAF\"}}]}",      // overlong UTF-8
           "{\"attempt\": 1, \"records\": [{\"seq\": 0, \"record\": {\"s\": \"\xED\xA0\x80\"}}]}",  // a surrogate
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"s": "\ud800"}}]})",  // a lone high surrogate
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": 1.}}]})", R"({"attempt": tru, "records": []})",
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": 1e999}}]})",  // beyond a double
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": -0.5E+309}}]})",
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": )" + std::string(309, '9') + "}}]}"}) {
    RecordBatch batch;
    EXPECT_EQ(read_record_batch(bad, batch), "body is not valid JSON") << bad;
    EXPECT_FALSE(Json::accept(bad)) << "nlohmann accepts " << bad;
  }
}

// Numbers at a double's edges that nlohmann reads (an underflow is 0) are read too: a record
// stored as its text must read back, and one that would is not refused.
TEST(RecordBatch, TakesNumbersAtTheEdgesOfADouble) {
  for (const std::string& good : std::vector<std::string>{
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": 1e-999}}]})",
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": 1.7976931348623157e308}}]})",
           R"({"attempt": 1, "records": [{"seq": 0, "record": {"v": )" + std::string(308, '9') + "}}]}"}) {
    RecordBatch batch;
    EXPECT_EQ(read_record_batch(good, batch), "") << good;
    EXPECT_TRUE(Json::accept(good)) << "nlohmann refuses " << good;
    EXPECT_EQ(batch.records.size(), 1u);
  }
}

TEST(RecordBatch, NamesTheEnvelopesProblem) {
  RecordBatch batch;
  EXPECT_EQ(read_record_batch("[1]", batch), "body is not a JSON object");
  EXPECT_EQ(read_record_batch("", batch), "records: missing field 'attempt' (an integer)");
  EXPECT_EQ(read_record_batch(R"({"attempt": "1", "records": []})", batch),
            "records: field 'attempt' must be an integer, not string");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": 5}]})", batch),
            "records[0]: field 'record' must be an object, not 5");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": {}, "x": 1}]})", batch),
            "records[0]: unknown field 'x' (known: seq, record)");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": {}})", batch),
            "records: field 'records' must be an array, not object");
  // An entry of another form after plain ones: the same checks as for every entry.
  EXPECT_EQ(read_record_batch(
                R"({"attempt": 1, "records": [{"seq": 0, "record": {}}, {"seq": 1, "record": {}, "x": 1}]})", batch),
            "records[1]: unknown field 'x' (known: seq, record)");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": {}}, 5]})", batch),
            "records[1]: body is not a JSON object");
  EXPECT_EQ(
      read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": {}}, {"seq": 1.5, "record": {}}]})", batch),
      "records[1]: field 'seq' must be an integer, not 1.5");
  EXPECT_EQ(read_record_batch(R"({"attempt": 1, "records": [{"seq": 0, "record": {}, "record": []}]})", batch),
            "records[0]: field 'record' must be an object, not array");
  ASSERT_EQ(read_record_batch(
                R"({"attempt": 1, "records": [{"seq": 0, "record": {}}, {"seq": 9, "seq": 2, "record": {}}]})", batch),
            "");
  EXPECT_EQ(batch.records[1].seq, 2) << "the last of duplicate keys, as nlohmann reads them";
  const std::string deep = R"({"attempt": 1, "records": [{"seq": 0, "record": {"p": )" + std::string(100, '[') +
                           std::string(100, ']') + "}}]}";
  EXPECT_EQ(read_record_batch(deep, batch), "JSON nested deeper than 64 levels");
}

}  // namespace
}  // namespace scalebench
