// Predictions from records and their scores: a series measured at 2 and 3 nodes is predicted at
// 4 from the model, with its inputs; one node count is not enough; the series key leaves out how
// points were sampled; a score's error is (predicted - measured) / measured, its headline from
// 1 MiB up.
#include "analysis/prediction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

namespace scalebench {
namespace {

double ring_time_us(int n, double size) { return 2 * (n - 1) * 5.0 + 2.0 * (n - 1) / n * size / (10 * 1e3); }

Json params(double time_cap = 0.2) {
  return Json{
      {"backend", "mpi"}, {"op", "all_reduce"}, {"dtype", "float32"}, {"time_cap", time_cap}, {"max_bytes", 4 << 20}};
}

Json record(long long id, int nodes, long long size, const std::string& metric, double value,
            const Json& p = params()) {
  return Json{{"record_id", id},
              {"experiment", "ar"},
              {"workload", "collective"},
              {"variant", "default"},
              {"params", p},
              {"placement", Json{{"nodes", nodes}, {"ranks_per_node", 1}, {"ranks", nodes}, {"gpus", 0}}},
              {"point", Json{{"size", size}}},
              {"metric", metric},
              {"unit", metric == "time" ? "us" : "GB/s"},
              {"value", value},
              {"status", "ok"}};
}

Json two_and_three_nodes() {
  Json records = Json::array();
  long long id = 100;
  for (int n : {2, 3})
    for (long long s = 4096; s <= 4 << 20; s *= 4) {
      records.push_back(record(id++, n, s, "time", ring_time_us(n, s)));
      records.push_back(record(id++, n, s, "busbw", 1));  // not what the fit reads
    }
  return records;
}

TEST(MakePredictions, TwoNodeCountsPredictFourWithTheirInputs) {
  const Predictions p = make_predictions(two_and_three_nodes(), {7}, 4);
  ASSERT_EQ(p.made.size(), 1u) << (p.skipped.empty() ? "" : p.skipped[0]);
  const Json& made = p.made[0];
  EXPECT_EQ(made["experiments"], Json::array({7}));
  EXPECT_EQ(made["op"], "all_reduce");
  EXPECT_EQ(made["workload"], "collective");
  EXPECT_EQ(made["variant"], "default");
  EXPECT_EQ(made["nodes"], 4);
  EXPECT_EQ(made["ranks_per_node"], 1);
  EXPECT_EQ(made["fit_nodes"], Json::array({2, 3}));
  EXPECT_FALSE(made["params"].contains("time_cap")) << "measurement parameters are no part of the series";
  EXPECT_FALSE(made["params"].contains("max_bytes"));
  EXPECT_EQ(made["params"]["op"], "all_reduce");
  // The time records only, every one of them.
  EXPECT_EQ(made["record_ids"].size(), 12u);
  EXPECT_EQ(made["record_ids"][0], 100);
  EXPECT_EQ(made["record_ids"][1], 102);
  EXPECT_NEAR(made["model"]["step_latency_us"].get<double>(), 5, 1e-9);
  // One bus bandwidth a size, in size order, 10 GB/s each here.
  const Json& bandwidths = made["model"]["bus_bandwidth_by_size"];
  ASSERT_EQ(bandwidths.size(), 6u);
  for (std::size_t i = 0; i < bandwidths.size(); ++i) {
    EXPECT_EQ(bandwidths[i]["size"], made["predicted"][i]["size"]);
    EXPECT_TRUE(bandwidths[i]["size"].is_number_integer());
    EXPECT_NEAR(bandwidths[i]["gbps"].get<double>(), 10, 1e-9);
  }
  EXPECT_FALSE(made["model"].contains("bus_bandwidth_gbps"));
  ASSERT_EQ(made["predicted"].size(), 6u);
  for (const auto& row : made["predicted"]) {
    const double size = row["size"].get<double>();
    const double truth = size / ring_time_us(4, size) * 1.5 / 1e3;
    EXPECT_NEAR(row["busbw"].get<double>(), truth, 1e-9 * truth);
  }
  EXPECT_TRUE(made["predicted"][0]["size"].is_number_integer());
  // The model object reads back as the same model.
  const auto model = collective_model_from_json("all_reduce", made["model"]);
  ASSERT_TRUE(model);
  EXPECT_DOUBLE_EQ(model->busbw_gbps(4, 1 << 20), made["predicted"][4]["busbw"].get<double>());
}

TEST(CollectiveModelJson, TheSingleBandwidthFormAndBrokenBandwidthsAreNoModel) {
  const Json made = make_predictions(two_and_three_nodes(), {7}, 4).made.at(0);
  EXPECT_FALSE(is_single_bandwidth_model(made["model"]));
  // The form before one bus bandwidth per size.
  const Json old{{"formula", "t(n, S) = steps(n) * a + factor(n) * S / B"},
                 {"step_latency_us", 5.0},
                 {"bus_bandwidth_gbps", 10.0},
                 {"points", 12},
                 {"rank_counts", 2},
                 {"max_fit_error_pct", 0.0}};
  EXPECT_TRUE(is_single_bandwidth_model(old));
  EXPECT_FALSE(collective_model_from_json("all_reduce", old));
  auto with_bandwidths = [&](const Json& bandwidths) {
    Json m = made["model"];
    m["bus_bandwidth_by_size"] = bandwidths;
    return collective_model_from_json("all_reduce", m);
  };
  EXPECT_TRUE(with_bandwidths(Json::array({Json{{"size", 4096}, {"gbps", 2.0}}})));
  EXPECT_FALSE(with_bandwidths(Json::array()));
  EXPECT_FALSE(with_bandwidths(Json::array({Json{{"size", 4096}, {"gbps", 0.0}}})));
  EXPECT_FALSE(with_bandwidths(Json::array({Json{{"size", 4096.5}, {"gbps", 2.0}}})));
  EXPECT_FALSE(with_bandwidths(Json::array({Json{{"size", 4096}}})));
  EXPECT_FALSE(with_bandwidths(Json::array({Json{{"size", 4096}, {"gbps", 2.0}}, Json{{"size", 4096}, {"gbps", 3.0}}})))
      << "two bandwidths for one size";
  EXPECT_FALSE(with_bandwidths(Json{{"4096", 2.0}}));
  // Latency alone (null) needs a latency: else the time would be 0.
  EXPECT_TRUE(with_bandwidths(Json::array({Json{{"size", 4096}, {"gbps", nullptr}}})));
  Json no_latency = made["model"];
  no_latency["step_latency_us"] = 0;
  no_latency["bus_bandwidth_by_size"] = Json::array({Json{{"size", 4096}, {"gbps", nullptr}}});
  EXPECT_FALSE(collective_model_from_json("all_reduce", no_latency));
}

TEST(MakePredictions, ASizeOfLatencyAloneIsPredictedWithANullBandwidth) {
  Json records = two_and_three_nodes();
  for (auto& r : records)  // 4 KiB: the latency steps' time, a hair less
    if (r["point"]["size"] == 4096 && r["metric"] == "time")
      r["value"] = 2 * (r["placement"]["nodes"].get<int>() - 1) * 5.0 * 0.99;
  const Predictions p = make_predictions(records, {7}, 4);
  ASSERT_EQ(p.made.size(), 1u);
  EXPECT_TRUE(p.skipped.empty());
  const Json& made = p.made[0];
  ASSERT_EQ(made["predicted"].size(), 6u);
  EXPECT_EQ(made["model"]["bus_bandwidth_by_size"][0], (Json{{"size", 4096}, {"gbps", nullptr}}));
  EXPECT_GT(made["predicted"][0]["busbw"].get<double>(), 0);
  // It reads back: null is the infinite bandwidth, and the predictions are the model's.
  const auto model = collective_model_from_json("all_reduce", made["model"]);
  ASSERT_TRUE(model);
  EXPECT_TRUE(std::isinf(model->bandwidth_gbps(4096)));
  for (const auto& row : made["predicted"])
    EXPECT_DOUBLE_EQ(model->busbw_gbps(4, row["size"].get<double>()), row["busbw"].get<double>());
}

TEST(MakePredictions, OneNodeCountIsSkippedWithWhy) {
  Json records = Json::array();
  for (long long s = 4096; s <= 4 << 20; s *= 4) records.push_back(record(1, 2, s, "time", ring_time_us(2, s)));
  const Predictions p = make_predictions(records, {1}, 4);
  EXPECT_TRUE(p.made.empty());
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_EQ(p.skipped[0],
            "all_reduce, variant default, 1 rank per node: measured at 2 nodes only; a prediction needs 2 node "
            "counts or more");
}

TEST(MakePredictions, FailedAndNonCollectiveRecordsAreLeftOut) {
  Json records = two_and_three_nodes();
  for (auto& r : records)
    if (r["placement"]["nodes"] == 3) r["status"] = "failed";
  Json gemm = record(1, 2, 4096, "time", 3);
  gemm["params"] = Json{{"precision", "bf16"}};
  records.push_back(gemm);
  const Predictions p = make_predictions(records, {1}, 4);
  EXPECT_TRUE(p.made.empty());
  EXPECT_EQ(p.skipped.size(), 1u);
}

TEST(SeriesKey, LeavesOutSamplingButNotWhatIsMeasured) {
  const Json a = record_series(record(1, 2, 4096, "time", 1, params(0.2)));
  EXPECT_EQ(a, record_series(record(2, 4, 1 << 20, "busbw", 9, params(1.5)))) << "time cap and node count differ";
  Json reordered = Json{{"max_bytes", 1}, {"dtype", "float32"}, {"op", "all_reduce"}, {"backend", "mpi"}};
  EXPECT_EQ(a.dump(), record_series(record(3, 2, 4096, "time", 1, reordered)).dump()) << "the same as text";
  Json other = params();
  other["dtype"] = "float64";
  EXPECT_NE(a, record_series(record(4, 2, 4096, "time", 1, other)));
  Json v = record(5, 2, 4096, "time", 1);
  v["variant"] = "pcie";
  EXPECT_NE(a, record_series(v));
  Json two_per_node = record(6, 2, 4096, "time", 1);
  two_per_node["placement"]["ranks"] = 4;
  EXPECT_NE(a, record_series(two_per_node));
  EXPECT_TRUE(record_series(Json{{"params", Json{{"precision", "bf16"}}}}).is_null());
}

TEST(SeriesKey, ARunSpecKeysAsItsRecordsDo) {
  const Json spec{{"experiment", "ar"}, {"workload", "collective"}, {"variant", "default"}, {"params", params(2.0)},
                  {"nodes", 4},         {"ranks_per_node", 1},      {"gpu", false}};
  EXPECT_EQ(run_series(spec).dump(), record_series(record(1, 2, 4096, "time", 1)).dump());
  // On GPUs the collective's ranks are the GPUs: 8 per node here, over 4 processes.
  Json gpu = spec;
  gpu["gpu"] = true, gpu["gpus_per_node"] = 8, gpu["ranks_per_node"] = 4;
  Json r = record(1, 2, 4096, "time", 1, params(2.0));
  r["placement"] = Json{{"nodes", 2}, {"ranks_per_node", 4}, {"ranks", 8}, {"gpus", 16}};
  EXPECT_EQ(run_series(gpu).dump(), record_series(r).dump());
  EXPECT_EQ(run_series(gpu)["ranks_per_node"], 8);
}

TEST(ScorePrediction, ErrorIsPredictedOverMeasuredAndTheHeadlineStartsAt1MiB) {
  const Json predicted = Json::array({Json{{"size", 4096}, {"busbw", 0.5}}, Json{{"size", 1 << 20}, {"busbw", 9}},
                                      Json{{"size", 4 << 20}, {"busbw", 11}}, Json{{"size", 16 << 20}, {"busbw", 12}}});
  const BusbwBySize measured{{4096, {1.0}}, {1 << 20, {9.5, 10, 10.5}}, {4 << 20, {10, 10}}};
  const PredictionScore s = score_prediction(predicted, measured);
  ASSERT_EQ(s.sizes.size(), 3u) << "16 MiB was not measured";
  EXPECT_DOUBLE_EQ(s.sizes[0].error_pct, -50);  // 0.5 against 1: off by half, below 1 MiB
  EXPECT_DOUBLE_EQ(s.sizes[1].measured, 10);    // the median
  EXPECT_DOUBLE_EQ(s.sizes[1].error_pct, -10);
  EXPECT_DOUBLE_EQ(s.sizes[2].error_pct, 10);
  ASSERT_TRUE(s.max_abs_error_pct);
  EXPECT_DOUBLE_EQ(*s.max_abs_error_pct, 10);
  EXPECT_TRUE(s.met()) << "10% is within the goal";

  const Json j = to_json(s);
  EXPECT_EQ(j["goal_pct"], 10.0);
  EXPECT_EQ(j["met"], true);
  EXPECT_EQ(j["sizes"][1]["values"].size(), 3u);
  // A later run's values add to those the score was made from.
  BusbwBySize again = score_values(j);
  EXPECT_EQ(again, measured);
  again[4 << 20].push_back(7);  // median of 10, 10, 7: still 10
  again[16 << 20].push_back(10);
  const PredictionScore later = score_prediction(predicted, again);
  ASSERT_EQ(later.sizes.size(), 4u);
  EXPECT_DOUBLE_EQ(later.sizes[3].error_pct, 20);
  EXPECT_DOUBLE_EQ(*later.max_abs_error_pct, 20);
  EXPECT_FALSE(later.met());
}

TEST(ScorePrediction, NoLargeSizeMeansNoHeadline) {
  const PredictionScore s =
      score_prediction(Json::array({Json{{"size", 4096}, {"busbw", 2}}}), BusbwBySize{{4096, {1.0}}});
  ASSERT_EQ(s.sizes.size(), 1u);
  EXPECT_FALSE(s.max_abs_error_pct);
  EXPECT_FALSE(s.met());
  EXPECT_TRUE(to_json(s)["max_abs_error_pct"].is_null());
}

TEST(BusbwBySize, OkBusbwRecordsOnly) {
  Json records = Json::array({record(1, 4, 4096, "busbw", 2), record(2, 4, 4096, "busbw", 4),
                              record(3, 4, 4096, "time", 9), record(4, 4, 8192, "busbw", 5)});
  records[3]["status"] = "failed";
  const BusbwBySize m = busbw_by_size(records);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at(4096), (std::vector<double>{2, 4}));
}

}  // namespace
}  // namespace scalebench
