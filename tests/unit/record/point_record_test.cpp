#include "record/point_record.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

const Json kContext = Json{{"schema_version", 1}, {"run_id", 7}, {"experiment", "e"}, {"params", {{"op", "x"}}}};

TEST(PointRecord, WritesTheContextThenThePointsFieldsInTheRecordOrder) {
  PointRecord p;
  p.point = Json{{"size", 1024}};
  p.metric = "busbw", p.unit = "GB/s", p.better = "higher";
  p.samples = {3, 1, 2};
  p.stop = "repetitions";
  p.correctness = Correctness::counted(0);
  const Json r = p.to_json(kContext);
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.items()) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"schema_version", "run_id", "experiment", "params", "point", "metric", "unit",
                                      "better", "value", "stats", "correctness", "status", "reason", "time"}));
  EXPECT_EQ(r["value"], 2.0);
  EXPECT_EQ(r["stats"].dump(),
            R"({"n":3,"median":2.0,"mean":2.0,"stddev":1.0,"cv":0.5,"min":1.0,"max":3.0,"samples":[3.0,1.0,2.0],)"
            R"("stop":"repetitions"})");
  EXPECT_EQ(r["correctness"].dump(), R"({"checked":true,"passed":true,"wrong":0})");
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["reason"], "");
}

TEST(PointRecord, AnUnmeasuredPointHasANullValueAndNoStats) {
  PointRecord p;
  p.metric = "bandwidth";
  p.status = "failed", p.reason = "no samples";
  const Json r = p.to_json(kContext);
  EXPECT_TRUE(r["value"].is_null());
  EXPECT_FALSE(r.contains("stats"));
  EXPECT_EQ(r["status"], "failed");
}

TEST(Correctness, UncheckedCountedAndWithTheElementsCompared) {
  EXPECT_EQ(Correctness::unchecked().to_json().dump(), R"({"checked":false,"passed":null,"wrong":null})");
  EXPECT_EQ(Correctness::counted(3).to_json().dump(), R"({"checked":true,"passed":false,"wrong":3})");
  EXPECT_EQ(Correctness::counted(0, 4096).to_json().dump(),
            R"({"checked":true,"passed":true,"wrong":0,"elements":4096})");
}

}  // namespace
}  // namespace scalebench
