#include "record/record.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace scalebench {
namespace {

const Json kRunSpec{{"experiment", "quick"},
                    {"workload", "collective"},
                    {"variant", "pcie"},
                    {"params", {{"op", "all_reduce"}, {"dtype", "float32"}}},
                    {"env", {{"NCCL_P2P_DISABLE", "1"}}}};
const Json kPlacement{{"nodes", 1}, {"ranks", 2}, {"gpus", 2}};

// An ok busbw record of `value` GB/s at `size` bytes, as the collective workload writes it.
Json busbw_record(double value, std::uint64_t size = 1 << 20) {
  Json r = record_context(7, kRunSpec, kPlacement);
  r["point"] = {{"size", size}};
  r["metric"] = "busbw";
  r["unit"] = "GB/s";
  r["better"] = "higher";
  r["value"] = value;
  r["stats"] = {{"median", value}};
  r["status"] = "ok";
  return r;
}

Reference busbw_ref(double target, std::optional<double> lower, std::optional<double> upper) {
  Reference ref;
  ref.metric = "busbw";
  ref.target = target;
  ref.lower = lower;
  ref.upper = upper;
  ref.unit = "GB/s";
  return ref;
}

TEST(RecordContext, CarriesTheRunsIdentity) {
  Json c = record_context(7, kRunSpec, kPlacement);
  EXPECT_EQ(c["schema_version"], kRecordSchemaVersion);
  EXPECT_EQ(c["run_id"], 7);
  EXPECT_EQ(c["experiment"], "quick");
  EXPECT_EQ(c["workload"], "collective");
  EXPECT_EQ(c["variant"], "pcie");
  EXPECT_EQ(c["params"], kRunSpec["params"]);
  EXPECT_EQ(c["env_overrides"], kRunSpec["env"]);
  EXPECT_EQ(c["placement"], kPlacement);
}

TEST(RecordContext, MissingSpecFieldsAreEmpty) {
  Json c = record_context(1, Json::object(), Json::object());
  EXPECT_EQ(c["experiment"], "");
  EXPECT_EQ(c["params"], Json::object());
  EXPECT_EQ(c["env_overrides"], Json::object());
}

TEST(StatusRecord, HasNoValueOnlyAnOutcome) {
  Json r = status_record(record_context(3, kRunSpec, kPlacement), "timeout", "ran past 600 s");
  EXPECT_EQ(r["status"], "timeout");
  EXPECT_EQ(r["reason"], "ran past 600 s");
  EXPECT_EQ(r["metric"], "run");
  EXPECT_TRUE(r["value"].is_null());
  EXPECT_EQ(r["run_id"], 3);
  EXPECT_EQ(r["experiment"], "quick");
  EXPECT_TRUE(std::regex_match(r["time"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << r["time"];
  EXPECT_EQ(validate_record(r), "");
}

TEST(ValidateRecord, AcceptsEveryStatus) {
  EXPECT_EQ(validate_record(busbw_record(100)), "");
  for (const char* s : {"failed", "timeout", "skipped", "cancelled"})
    EXPECT_EQ(validate_record(status_record(record_context(1, kRunSpec, kPlacement), s, "why")), "") << s;
}

TEST(ValidateRecord, RejectsMalformedRecords) {
  EXPECT_NE(validate_record(Json::array()), "");
  EXPECT_NE(validate_record(Json("record")), "");

  Json r = busbw_record(100);
  r.erase("schema_version");
  EXPECT_NE(validate_record(r).find("schema_version"), std::string::npos);

  r = busbw_record(100);
  r["schema_version"] = kRecordSchemaVersion + 1;
  EXPECT_NE(validate_record(r).find("not the supported"), std::string::npos);

  for (const char* key : {"experiment", "workload", "metric", "unit", "status"}) {
    r = busbw_record(100);
    r.erase(key);
    EXPECT_NE(validate_record(r).find(key), std::string::npos) << key;
    r = busbw_record(100);
    r[key] = 5;
    EXPECT_NE(validate_record(r).find(key), std::string::npos) << key << " as a number";
  }

  r = busbw_record(100);
  r["run_id"] = "7";
  EXPECT_NE(validate_record(r).find("run_id"), std::string::npos);

  r = busbw_record(100);
  r["status"] = "great";
  EXPECT_NE(validate_record(r).find("'great'"), std::string::npos);
}

TEST(ValidateRecord, OkRecordsNeedANumericValueAndStats) {
  Json r = busbw_record(100);
  r["value"] = nullptr;
  EXPECT_NE(validate_record(r).find("value"), std::string::npos);
  r = busbw_record(100);
  r["value"] = "100";
  EXPECT_NE(validate_record(r).find("value"), std::string::npos);
  r = busbw_record(100);
  r.erase("stats");
  EXPECT_NE(validate_record(r).find("stats"), std::string::npos);
}

// The coordinator reads these for references and /metrics labels: a wrong type is refused here,
// naming the field, instead of failing later after the record was stored.
TEST(ValidateRecord, OptionalFieldsMustHaveTheirType) {
  const std::vector<std::pair<std::string, Json>> cases{
      {"'placement' must be an object", "node1"},  // placement
      {"'params' must be an object", Json::array()},
      {"'point' must be an object", 1024},
      {"'variant' must be a string", 3},
      {"'round' must be an integer", "1"},
  };
  const char* fields[] = {"placement", "params", "point", "variant", "round"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Json r = busbw_record(100);
    r[fields[i]] = cases[i].second;
    EXPECT_EQ(validate_record(r), cases[i].first) << fields[i];
  }
  Json r = busbw_record(100);
  r["placement"]["gpus"] = "2";
  EXPECT_EQ(validate_record(r), "'placement.gpus' must be an integer");
  r = status_record(record_context(1, kRunSpec, kPlacement), "failed", "why");
  EXPECT_EQ(validate_record(r), "");  // value null is fine
  r["value"] = "n/a";
  EXPECT_EQ(validate_record(r), "'value' must be a number or null");
}

TEST(EvaluateReference, PassesWithinTheTolerances) {
  Json out = evaluate_reference(busbw_ref(100, -0.05, 0.1), busbw_record(97));
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["outcome"], "pass");
  EXPECT_DOUBLE_EQ(out["target"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(out["lower_bound"].get<double>(), 95);
  EXPECT_DOUBLE_EQ(out["upper_bound"].get<double>(), 110);
  EXPECT_EQ(out["unit"], "GB/s");
}

TEST(EvaluateReference, FailsOutsideEitherBound) {
  EXPECT_EQ(evaluate_reference(busbw_ref(100, -0.05, 0.1), busbw_record(94.9))["outcome"], "fail");
  EXPECT_EQ(evaluate_reference(busbw_ref(100, -0.05, 0.1), busbw_record(110.1))["outcome"], "fail");
}

TEST(EvaluateReference, BoundsAreInclusive) {
  EXPECT_EQ(evaluate_reference(busbw_ref(100, -0.25, 0.5), busbw_record(75))["outcome"], "pass");
  EXPECT_EQ(evaluate_reference(busbw_ref(100, -0.25, 0.5), busbw_record(150))["outcome"], "pass");
}

TEST(EvaluateReference, AMissingBoundIsUnlimited) {
  Json only_lower = evaluate_reference(busbw_ref(100, -0.1, std::nullopt), busbw_record(1e6));
  EXPECT_EQ(only_lower["outcome"], "pass");
  EXPECT_FALSE(only_lower.contains("upper_bound"));
  EXPECT_EQ(evaluate_reference(busbw_ref(100, -0.1, std::nullopt), busbw_record(89))["outcome"], "fail");

  Json none = evaluate_reference(busbw_ref(100, std::nullopt, std::nullopt), busbw_record(1));
  EXPECT_EQ(none["outcome"], "pass");
  EXPECT_FALSE(none.contains("lower_bound"));
  EXPECT_FALSE(none.contains("upper_bound"));
}

TEST(EvaluateReference, NegativeTargetsScaleByTheirMagnitude) {
  Json out = evaluate_reference(busbw_ref(-10, -0.1, 0.1), busbw_record(-10.5));
  EXPECT_DOUBLE_EQ(out["lower_bound"].get<double>(), -11);
  EXPECT_DOUBLE_EQ(out["upper_bound"].get<double>(), -9);
  EXPECT_EQ(out["outcome"], "pass");
}

TEST(EvaluateReference, NonFiniteValueFails) {
  Json r = busbw_record(0);
  r["value"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(evaluate_reference(busbw_ref(100, std::nullopt, std::nullopt), r)["outcome"], "fail");
}

TEST(EvaluateReference, DoesNotApplyToOtherMetricsOrFailedRecords) {
  Reference ref = busbw_ref(100, -0.1, 0.1);
  Json other = busbw_record(100);
  other["metric"] = "algbw";
  EXPECT_TRUE(evaluate_reference(ref, other).is_null());
  Json failed = busbw_record(100);
  failed["status"] = "failed";
  EXPECT_TRUE(evaluate_reference(ref, failed).is_null());
  Json status = status_record(record_context(1, kRunSpec, kPlacement), "timeout", "slow");
  status["metric"] = "busbw";
  EXPECT_TRUE(evaluate_reference(ref, status).is_null());
}

TEST(EvaluateReference, WhereSelectsThePoint) {
  Reference ref = busbw_ref(100, -0.1, std::nullopt);
  ref.where = {{"size", 1 << 20}, {"dtype", "float32"}, {"variant", "pcie"}, {"gpus", "2"}};
  EXPECT_EQ(evaluate_reference(ref, busbw_record(95))["outcome"], "pass");
  EXPECT_TRUE(evaluate_reference(ref, busbw_record(95, 2 << 20)).is_null()) << "another size";

  Json other_variant = busbw_record(95);
  other_variant["variant"] = "nvlink";
  EXPECT_TRUE(evaluate_reference(ref, other_variant).is_null());

  Json other_dtype = busbw_record(95);
  other_dtype["params"]["dtype"] = "float64";
  EXPECT_TRUE(evaluate_reference(ref, other_dtype).is_null());

  Json other_gpus = busbw_record(95);
  other_gpus["placement"]["gpus"] = 4;
  EXPECT_TRUE(evaluate_reference(ref, other_gpus).is_null());
}

TEST(EvaluateReference, GpusAndRanksMatchTheirOwnPlacementField) {
  Json host = busbw_record(95);
  host["placement"] = {{"nodes", 1}, {"ranks", 2}, {"gpus", 0}};
  Reference by_ranks = busbw_ref(100, -0.1, std::nullopt);
  by_ranks.where = {{"ranks", "2"}};
  Reference by_gpus = busbw_ref(100, -0.1, std::nullopt);
  by_gpus.where = {{"gpus", "2"}};
  EXPECT_EQ(evaluate_reference(by_ranks, host)["outcome"], "pass");
  EXPECT_TRUE(evaluate_reference(by_gpus, host).is_null()) << "2 host-memory ranks are not 2 GPUs";
  EXPECT_EQ(evaluate_reference(by_gpus, busbw_record(95))["outcome"], "pass");
}

TEST(EvaluateReference, WhereOnAFieldTheRecordLacksDoesNotApply) {
  Reference ref = busbw_ref(100, -0.1, std::nullopt);
  ref.where = {{"in_place", true}};
  EXPECT_TRUE(evaluate_reference(ref, busbw_record(100)).is_null());
  Json r = busbw_record(100);
  r["params"]["in_place"] = true;
  EXPECT_EQ(evaluate_reference(ref, r)["outcome"], "pass");
}

TEST(EvaluateReference, ReferenceParsedFromAnExperimentFile) {
  Experiment ex = parse_experiment(
      "name: ref\nworkload: collective\nreferences:\n"
      "  busbw:\n    target: 150\n    lower: -0.1\n    unit: GB/s\n"
      "    where: {size: 1MiB, op: all_reduce, ranks: 2}\n",
      "ref.yaml");
  ASSERT_EQ(ex.references.size(), 1u);
  const Reference& ref = ex.references[0];
  EXPECT_EQ(evaluate_reference(ref, busbw_record(140))["outcome"], "pass");
  EXPECT_EQ(evaluate_reference(ref, busbw_record(130))["outcome"], "fail");
  EXPECT_TRUE(evaluate_reference(ref, busbw_record(140, 64 << 20)).is_null());
}

}  // namespace
}  // namespace scalebench
