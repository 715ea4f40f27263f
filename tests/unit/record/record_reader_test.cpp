#include "record/record_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "record/record.hpp"

namespace scalebench {
namespace {

// An ok busbw record as the collective workload writes it, stored as record 12.
Json stored_busbw() {
  Json r = record_context(7,
                          Json{{"experiment", "quick"},
                               {"workload", "collective"},
                               {"variant", "pcie"},
                               {"round", 2},
                               {"params", {{"op", "all_reduce"}}}},
                          Json{{"nodes", 1}, {"ranks", 2}, {"gpus", 2}, {"hosts", {"a", "a"}}});
  r["record_id"] = 12;
  r["point"] = {{"size", 1048576}};
  r["metric"] = "busbw";
  r["unit"] = "GB/s";
  r["better"] = "higher";
  r["value"] = 21.5;
  r["stats"] = {{"median", 21.5}, {"cv", 0.02}};
  r["correctness"] = {{"checked", true}, {"passed", true}, {"wrong", 0}};
  r["references"] = Json::array({{{"outcome", "fail"}}});
  r["status"] = "ok";
  r["reason"] = "";
  return r;
}

std::string error_of(const Json& record) {
  try {
    RecordView{record};
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RecordView, ReadsTheFieldsReadersUse) {
  const Json json = stored_busbw();
  const RecordView r(json);
  EXPECT_EQ(r.record_id, 12);
  EXPECT_EQ(r.run_id, 7);
  EXPECT_EQ(r.experiment, "quick");
  EXPECT_EQ(r.workload, "collective");
  EXPECT_EQ(r.variant, "pcie");
  EXPECT_EQ(r.round, 2);
  EXPECT_EQ(r.metric, "busbw");
  EXPECT_EQ(r.unit, "GB/s");
  EXPECT_EQ(r.better, "higher");
  EXPECT_EQ(r.value, 21.5);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.is_figure());
  EXPECT_EQ(r.placement.nodes, 1);
  EXPECT_EQ(r.placement.gpus, 2);
  EXPECT_FALSE(r.placement.ranks_per_node);
  EXPECT_EQ(r.params().value("op", ""), "all_reduce");
  EXPECT_EQ(r.size(), 1048576u);
  EXPECT_EQ(r.cv(), 0.02);
  EXPECT_EQ(r.passed(), true);
  EXPECT_TRUE(r.reference_failed());
  EXPECT_EQ(r.host(), "a");
}

TEST(RecordView, AFieldTheRecordLacksReadsAsTheSchemaDefault) {
  const Json json{{"metric", "run"}, {"status", "skipped"}, {"value", nullptr}};
  const RecordView r(json);
  EXPECT_FALSE(r.run_id);
  EXPECT_EQ(r.variant, "");
  EXPECT_EQ(r.round, 1);
  EXPECT_FALSE(r.value);
  EXPECT_FALSE(r.is_figure());
  EXPECT_FALSE(r.placement.gpus);
  EXPECT_TRUE(r.params().empty());
  EXPECT_TRUE(r.references().empty());
  EXPECT_FALSE(r.size());
  EXPECT_FALSE(r.passed()) << "not checked";
}

// A malformed record is refused with its id and the field, wherever it is read.
TEST(RecordView, AFieldOfTheWrongTypeIsNamed) {
  Json r = stored_busbw();
  r["placement"]["gpus"] = "2";
  EXPECT_EQ(error_of(r), "record 12: 'placement.gpus' must be an integer");
  r = stored_busbw();
  r["variant"] = 3;
  EXPECT_EQ(error_of(r), "record 12: 'variant' must be a string");
  r = stored_busbw();
  r["value"] = "fast";
  EXPECT_EQ(error_of(r), "record 12: 'value' must be a number or null");
  r = stored_busbw();
  r["params"] = Json::array();
  EXPECT_EQ(error_of(r), "record 12: 'params' must be an object");
  r = stored_busbw();
  r["placement"]["hosts"] = {"a", 1};
  EXPECT_EQ(error_of(r), "record 12: 'placement.hosts' must be an array of host names");
  r.erase("record_id");
  EXPECT_EQ(error_of(r), "'placement.hosts' must be an array of host names") << "a record not stored yet";
  EXPECT_EQ(error_of(Json::array()), "a record is a JSON object, not array");
}

TEST(RecordView, HostGpuAndModelOfEachKindOfRecord) {
  const Json gemm{{"point", Json{{"gpu", 3}}},
                  {"placement", Json{{"hosts", {"a", "a"}}}},
                  {"environment", Json{{"gpu_models", {"NVIDIA H200"}}}}};
  EXPECT_EQ(RecordView(gemm).host(), "a");
  EXPECT_EQ(RecordView(gemm).gpu(), 3);
  EXPECT_EQ(RecordView(gemm).model(), "NVIDIA H200");
  const Json multi{{"placement", Json{{"hosts", {"a", "b"}}}}};
  EXPECT_EQ(RecordView(multi).host(), "") << "a run over several nodes belongs to none";
  EXPECT_EQ(RecordView(multi).gpu(), -1);
  EXPECT_EQ(RecordView(multi).model(), "");
  const Json burn{{"point", Json{{"host", "b"}, {"gpu", 0}, {"model", "H100"}}}};
  EXPECT_EQ(RecordView(burn).host(), "b");
  EXPECT_EQ(RecordView(burn).model(), "H100");
}

TEST(FieldAt, FollowsADottedPath) {
  const Json r{{"details", {{"checksum", "ab"}}}, {"point", {{"size", 4}}}};
  EXPECT_EQ(field_at(r, "details.checksum"), "ab");
  EXPECT_EQ(field_at(r, "point.size"), 4);
  EXPECT_TRUE(field_at(r, "point.size.x").is_null());
  EXPECT_TRUE(field_at(r, "link.peak_GBps").is_null());
}

}  // namespace
}  // namespace scalebench
