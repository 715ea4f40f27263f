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

TEST(TtaRecords, PrintedLines) {
  EXPECT_EQ(tta_seed_line(seed(4, true, 3.0)),
            "tta seed=4 reached=yes epochs=5 accuracy=0.9310 time_s=3.000 time_without_eval_s=2.700");
  EXPECT_EQ(tta_summary_line({seed(1, true, 3.0), seed(2, true, 5.0)}, TtaConfig{}, 1),
            "tta summary seeds=2 reached=2 counts=yes median_s=4.000 min_s=3.000 max_s=5.000");
}

}  // namespace
}  // namespace scalebench::train
