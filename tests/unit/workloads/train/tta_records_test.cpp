#include "workloads/train/tta_records.hpp"

#include <gtest/gtest.h>

#include "record/record.hpp"

namespace scalebench::train {
namespace {

SeedResult seed(std::uint64_t s, bool reached, double total) {
  SeedResult r;
  r.seed = s, r.reached = reached, r.epochs = reached ? 5 : 20, r.total_s = total, r.train_s = total * 0.9;
  r.final_accuracy = reached ? 0.931 : 0.92;
  r.mllog = {":::MLLOG {}"};
  return r;
}

Json context() { return Json{{"run_id", 7}, {"experiment", "tta"}, {"workload", "train"}, {"params", Json::object()}}; }

TEST(TtaRecords, PerSeedThenSummaryAndCost) {
  TtaConfig cfg;
  cfg.cost_per_gpu_hour = 3.6;
  const TtaShape shape{2, 1024, 0.8, "bf16", "fmnist-resnet", "fashion-mnist"};
  const auto recs = tta_records(context(), cfg, shape, {seed(1, true, 3.0), seed(2, false, 9.0), seed(3, true, 5.0)});
  ASSERT_EQ(recs.size(), 5u);
  for (const auto& r : recs) EXPECT_EQ(validate_record(r), "") << r.dump();
  EXPECT_EQ(recs[0]["value"], 3.0);
  EXPECT_EQ(recs[0]["status"], "ok");
  EXPECT_EQ(recs[0]["details"]["time_without_eval_s"], 2.7);
  EXPECT_EQ(recs[1]["status"], "failed");
  EXPECT_NE(recs[1]["reason"].get<std::string>().find("aborted: test accuracy 0.9200 after 20 epochs"),
            std::string::npos);
  EXPECT_EQ(recs[3]["point"]["seed"], "all");
  EXPECT_EQ(recs[3]["value"], 4.0);    // median of 3 and 5
  EXPECT_EQ(recs[3]["status"], "ok");  // 2 of 3: one miss allowed
  EXPECT_EQ(recs[3]["details"]["reached"], 2);
  EXPECT_EQ(recs[4]["metric"], "cost_to_target");
  EXPECT_DOUBLE_EQ(recs[4]["value"].get<double>(), 4.0 * 2 * 3.6 / 3600);
}

TEST(TtaRecords, TooFewSeedsReachedFailsTheSummary) {
  const TtaConfig cfg;
  const TtaShape shape{1, 512, 0.4, "bf16", "fmnist-resnet", "fashion-mnist"};
  const auto recs = tta_records(context(), cfg, shape, {seed(1, true, 3.0), seed(2, false, 9.0), seed(3, false, 5.0)});
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[3]["status"], "failed");
  EXPECT_NE(recs[3]["reason"].get<std::string>().find("1 of 3 seeds reached"), std::string::npos);
}

// Each quantized net's test accuracy as a record of its own, failed beyond the tolerance.
TEST(TtaRecords, QuantizedAccuracyAgainstTheTrainedNet) {
  TtaConfig cfg;
  cfg.quantize = {"int8", "fp8e4m3"};
  const TtaShape shape{1, 512, 0.4, "bf16", "fmnist-resnet", "fashion-mnist"};
  SeedResult r = seed(1, true, 3.0);  // 0.931
  r.quantized = {{"int8", 0.9290, Json{{"format", "int8"}}, ""}, {"fp8e4m3", 0.9270, Json::object(), ""}};
  const auto recs = tta_records(context(), cfg, shape, {r});
  ASSERT_EQ(recs.size(), 4u);  // the seed, its two quantized nets, the summary
  for (const auto& q : recs) EXPECT_EQ(validate_record(q), "") << q.dump();
  EXPECT_EQ(recs[1]["metric"], "quantized_accuracy");
  EXPECT_EQ(recs[1]["point"]["precision"], "int8");
  EXPECT_EQ(recs[1]["value"], 0.929);
  EXPECT_EQ(recs[1]["status"], "ok");  // 0.2 points lost
  EXPECT_NEAR(recs[1]["details"]["lost_points"].get<double>(), 0.2, 1e-9);
  EXPECT_EQ(recs[1]["details"]["trained_precision"], "bf16");
  EXPECT_EQ(recs[1]["details"]["quantization"]["format"], "int8");
  EXPECT_EQ(recs[2]["point"]["precision"], "fp8e4m3");
  EXPECT_EQ(recs[2]["status"], "failed");  // 0.4 points lost
  EXPECT_EQ(recs[2]["reason"], "fp8e4m3 lost 0.40 points of test accuracy against bf16's 0.9310 (at most 0.30)");
  EXPECT_EQ(tta_quantized_line(r, r.quantized[1], cfg),
            "tta seed=1 quantized=fp8e4m3 accuracy=0.9270 trained=0.9310 lost_points=0.40 within=no");
  // A format that could not be built: no value, the reason, and the seed's own record untouched.
  r.quantized = {{"int8", 0, Json(), "cuDNN took no graph"}};
  const auto failed = tta_records(context(), cfg, shape, {r});
  EXPECT_EQ(failed[0]["status"], "ok");
  EXPECT_TRUE(failed[1]["value"].is_null());
  EXPECT_EQ(failed[1]["status"], "failed");
  EXPECT_EQ(failed[1]["reason"], "int8: cuDNN took no graph");
  EXPECT_EQ(validate_record(failed[1]), "");
}

TEST(TtaRecords, PrintedLines) {
  EXPECT_EQ(tta_seed_line(seed(4, true, 3.0)),
            "tta seed=4 reached=yes epochs=5 accuracy=0.9310 time_s=3.000 time_without_eval_s=2.700");
  EXPECT_EQ(tta_summary_line({seed(1, true, 3.0), seed(2, true, 5.0)}, TtaConfig{}, 1),
            "tta summary seeds=2 reached=2 counts=yes median_s=4.000 min_s=3.000 max_s=5.000");
}

}  // namespace
}  // namespace scalebench::train
