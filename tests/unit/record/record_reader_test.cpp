#include "record/record_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// What reading one field of a record throws, "" when it reads.
template <typename Read>
std::string read_error(const Json& record, Read read) {
  try {
    read(RecordView(record));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RecordView, TypedFieldsByTheirPath) {
  Json json = stored_busbw();
  json["details"] = {{"step_ms", 12.5}, {"clock_limits", {{"window_ms", 800}}}, {"algo", "ring"}};
  json["link"] = {{"path", "NVLINK"}, {"peak_GBps", 450}};
  json["pct_of_peak"] = nullptr;
  const RecordView r(json);
  EXPECT_EQ(r.details().value("algo", ""), "ring");
  EXPECT_EQ(r.number_at("details.step_ms"), 12.5);
  EXPECT_EQ(r.number_at("details.clock_limits.window_ms"), 800.0);
  EXPECT_EQ(r.integer_at("details.clock_limits.window_ms"), 800);
  EXPECT_EQ(r.integer_at("point.size"), 1048576);
  EXPECT_EQ(r.text_at("link.path"), "NVLINK");
  EXPECT_FALSE(r.number_at("details.step_ms_without_allreduce")) << "absent";
  EXPECT_FALSE(r.number_at("pct_of_peak")) << "null reads as absent";
  EXPECT_FALSE(r.text_at("details.clock_limits.reason.text")) << "absent on the way";
  EXPECT_TRUE(r.has("link"));
  EXPECT_FALSE(r.has("pct_of_peak"));
  EXPECT_FALSE(r.has("details.checksum"));
}

TEST(RecordView, ATypedFieldOfTheWrongTypeIsNamed) {
  Json json = stored_busbw();
  json["details"] = {{"step_ms", "slow"}, {"clock_limits", 3}};
  json["link"] = {{"path", 1}};
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.number_at("details.step_ms"); }),
            "record 12: 'details.step_ms' must be a number");
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.integer_at("value"); }),
            "record 12: 'value' must be an integer");
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.text_at("link.path"); }),
            "record 12: 'link.path' must be a string");
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.number_at("details.clock_limits.window_ms"); }),
            "record 12: 'details.clock_limits' must be an object");
  json["details"] = "none";
  EXPECT_EQ(error_of(json), "record 12: 'details' must be an object");
}

TEST(RecordView, SamplesAsStored) {
  Json json = stored_busbw();
  EXPECT_FALSE(RecordView(json).samples()) << "no stats.samples";
  json["stats"]["samples"] = {21.0, nullptr, 22.0};
  EXPECT_EQ(*RecordView(json).samples(), (std::vector<double>{21.0, 22.0})) << "a NaN sample (null) is left out";
  json["stats"]["samples"] = Json::array();
  EXPECT_TRUE(RecordView(json).samples()->empty());
  json["stats"]["samples"] = {21.0, "22"};
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.samples(); }),
            "record 12: 'stats.samples' must be an array of numbers");
  json["stats"]["samples"] = 21.0;
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.samples(); }),
            "record 12: 'stats.samples' must be an array of numbers");
}

TEST(RecordView, ReferencesTyped) {
  Json json = stored_busbw();
  json["references"] = Json::array({{{"target", 20}, {"unit", "GB/s"}, {"lower_bound", 18.0}, {"outcome", "pass"}},
                                    {{"target", 25}, {"upper_bound", 30.0}, {"outcome", "fail"}}});
  const auto refs = RecordView(json).reference_checks();
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].target, 20.0);
  EXPECT_EQ(refs[0].lower_bound, 18.0);
  EXPECT_FALSE(refs[0].upper_bound);
  EXPECT_EQ(refs[0].unit, "GB/s");
  EXPECT_EQ(refs[0].outcome, "pass");
  EXPECT_EQ(refs[1].upper_bound, 30.0);
  EXPECT_EQ(refs[1].outcome, "fail");
  json["references"][1]["target"] = "25";
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.reference_checks(); }),
            "record 12: 'references[1].target' must be a number");
  json["references"][1] = "fail";
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.reference_checks(); }),
            "record 12: 'references[1]' must be an object");
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.reference_failed(); }),
            "record 12: 'references[1]' must be an object");
  json["references"] = Json::array({{{"outcome", false}}});
  EXPECT_EQ(read_error(json, [](const RecordView& r) { r.reference_checks(); }),
            "record 12: 'references[0].outcome' must be a string");
}

TEST(RecordView, PlacementDevices) {
  Json json = stored_busbw();
  json["placement"]["devices"] = {{{"rank", 0}, {"host", "a"}, {"gpu", "NVIDIA H200"}}, {{"rank", 1}, {"host", "b"}}};
  const RecordView r(json);
  ASSERT_EQ(r.placement.devices.size(), 2u);
  EXPECT_EQ(r.placement.devices[1].rank, 1);
  EXPECT_EQ(r.placement.devices[1].host, "b");
  json["placement"]["devices"][1]["rank"] = "1";
  EXPECT_EQ(error_of(json), "record 12: 'placement.devices[1].rank' must be an integer");
  json["placement"]["devices"][1] = {{"rank", 1}, {"host", 2}};
  EXPECT_EQ(error_of(json), "record 12: 'placement.devices[1].host' must be a string");
  json["placement"]["devices"] = {"a"};
  EXPECT_EQ(error_of(json), "record 12: 'placement.devices[0]' must be an object");
  json["placement"]["devices"] = "a";
  EXPECT_EQ(error_of(json), "record 12: 'placement.devices' must be an array of objects");
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
