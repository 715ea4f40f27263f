#include "coordinator/record_batch.hpp"

#include <gtest/gtest.h>

#include <string>

namespace scalebench {
namespace {

const std::string kRecord =
    R"({"schema_version":1,"run_id":7,"experiment":"e","workload":"collective","metric":"busbw","unit":"GB/s",)"
    R"("status":"ok","value":12.5,"params":{"op":"all_reduce"},"placement":{"nodes":1,"gpus":-2},)"
    R"("stats":{"n":3,"samples":[1,2,3]},"environment":{"mpi":"Open MPI"},"note":"caf\u00e9 \"x\" é"})";

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
  EXPECT_EQ(f["params"], full["params"]);
  EXPECT_EQ(f["placement"], full["placement"]);
  EXPECT_EQ(f["note"], full["note"]);     // escapes decoded as nlohmann decodes them
  EXPECT_EQ(f["stats"], Json::object());  // bulky: an empty stand-in
  EXPECT_EQ(f["environment"], Json::object());
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
