#include "report/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/error.hpp"
#include "report/outliers.hpp"

namespace scalebench {
namespace {

// A collective point record as the workload writes it, trimmed to what compare reads.
Json record(const std::string& experiment, const std::string& metric, double value, std::vector<double> samples = {},
            std::uint64_t size = 1024) {
  const bool time = metric == "time";
  if (samples.empty()) samples = {value};
  return Json{{"experiment", experiment},
              {"workload", "collective"},
              {"variant", "default"},
              {"round", 1},
              {"params", {{"backend", "mpi"}, {"op", "all_reduce"}, {"iters", "auto"}, {"time_cap_s", 0.5}}},
              {"placement", {{"nodes", 1}, {"ranks", 2}, {"gpus", 0}, {"hosts", {"a"}}}},
              {"point", {{"size", size}, {"iters", 100}}},
              {"metric", metric},
              {"unit", time ? "us" : "GB/s"},
              {"better", time ? "lower" : "higher"},
              {"value", value},
              {"stats", {{"samples", samples}}},
              {"status", "ok"}};
}

const CompareRow& only(const std::vector<CompareRow>& rows) {
  EXPECT_EQ(rows.size(), 1u);
  return rows.front();
}

TEST(CompareKey, IgnoresExperimentRoundSamplingParamsAndChosenIters) {
  Json a = record("base", "busbw", 10);
  Json b = record("cand", "busbw", 10);
  b["round"] = 3;
  b["run_id"] = 7;
  // Another key order, other sampling parameters (how long to sample, not what), iters chosen by auto.
  b["params"] = Json{{"op", "all_reduce"}, {"backend", "mpi"}, {"iters", 20}, {"time_cap_s", 2.0}};
  b["point"]["iters"] = 7;
  b["placement"]["hosts"] = Json::array({"other-host"});
  EXPECT_EQ(point_key(a).dump(), point_key(b).dump());
  const auto rows = compare_records(Json::array({a}), Json::array({b}), {});
  EXPECT_EQ(only(rows).verdict, Verdict::kUnchanged);
  EXPECT_NEAR(only(rows).change_pct, 0, 1e-12);
}

TEST(CompareKey, WhatWasMeasuredKeepsPointsApart) {
  Json base = Json::array({record("b", "busbw", 10)});
  for (auto change : {std::function<void(Json&)>([](Json& r) { r["params"]["op"] = "all_gather"; }),
                      std::function<void(Json&)>([](Json& r) { r["variant"] = "tcp"; }),
                      std::function<void(Json&)>([](Json& r) { r["placement"]["ranks"] = 4; }),
                      std::function<void(Json&)>([](Json& r) { r["point"]["size"] = 2048; }),
                      std::function<void(Json&)>([](Json& r) { r["metric"] = "algbw"; })}) {
    Json c = record("c", "busbw", 10);
    change(c);
    const auto rows = compare_records(base, Json::array({c}), {});
    ASSERT_EQ(rows.size(), 2u) << c.dump();
    EXPECT_EQ(rows[0].verdict, Verdict::kMissing);
    EXPECT_EQ(rows[1].verdict, Verdict::kNew);
  }
}

// A baseline written before the workload gained a parameter (here as if collective had gained
// `dtype`) still matches a candidate that ran at that parameter's default, and only that one.
TEST(CompareKey, AParameterTheBaselineLacksIsReadAsItsDefault) {
  Json base = record("b", "busbw", 10);
  base["params"].erase("dtype");
  Json at_default = record("c", "busbw", 10);
  at_default["params"]["dtype"] = "float32";
  EXPECT_EQ(point_key(base).dump(), point_key(at_default).dump());
  EXPECT_EQ(only(compare_records(Json::array({base}), Json::array({at_default}), {})).verdict, Verdict::kUnchanged);
  Json other = record("c", "busbw", 10);
  other["params"]["dtype"] = "float16";
  EXPECT_NE(point_key(base).dump(), point_key(other).dump());
}

// gpt's points gained `pp` with the parameter: a baseline point written before lacks it, and
// still matches a candidate whose point repeats its pp parameter's default, and only that one.
TEST(CompareKey, APointFieldThatRepeatsAParameterIsNotWhatKeepsPointsApart) {
  Json base = record("b", "busbw", 10);
  base["params"].erase("dtype");
  Json repeats = record("c", "busbw", 10);
  repeats["params"]["dtype"] = "float32";
  repeats["point"]["dtype"] = "float32";
  EXPECT_EQ(point_key(base).dump(), point_key(repeats).dump());
  EXPECT_EQ(only(compare_records(Json::array({base}), Json::array({repeats}), {})).verdict, Verdict::kUnchanged);
  Json other = repeats;
  other["params"]["dtype"] = "float16";
  other["point"]["dtype"] = "float16";
  EXPECT_NE(point_key(base).dump(), point_key(other).dump());
  // A point value resolved from its parameter (0: chosen at run time) is what ran: it stays.
  Json resolved = record("c", "busbw", 10);
  resolved["params"]["dtype"] = "float32";
  resolved["point"]["dtype"] = "float16";
  EXPECT_NE(point_key(base).dump(), point_key(resolved).dump());
}
TEST(CompareChange, LessBandwidthIsANegativeRegression) {
  const auto rows = compare_records(Json::array({record("b", "busbw", 10, {9.8, 9.9, 10, 10.1, 10.2})}),
                                    Json::array({record("c", "busbw", 8, {7.8, 7.9, 8, 8.1, 8.2})}), {});
  EXPECT_NEAR(only(rows).change_pct, -20, 1e-9);
  EXPECT_EQ(only(rows).verdict, Verdict::kRegression);
  EXPECT_EQ(only(rows).baseline_samples, 5u);
  EXPECT_LT(only(rows).band_high_pct, 0);
}

TEST(CompareChange, MoreTimeIsAPositiveRegressionAndLessTimeAnImprovement) {
  const Json base = Json::array({record("b", "time", 100, {98, 99, 100, 101, 102})});
  const auto slower = compare_records(base, Json::array({record("c", "time", 150, {148, 149, 150, 151, 152})}), {});
  EXPECT_NEAR(only(slower).change_pct, 50, 1e-9);
  EXPECT_GT(only(slower).band_low_pct, 0);
  EXPECT_EQ(only(slower).verdict, Verdict::kRegression);
  const auto faster = compare_records(base, Json::array({record("c", "time", 50, {48, 49, 50, 51, 52})}), {});
  EXPECT_NEAR(only(faster).change_pct, -50, 1e-9);
  EXPECT_EQ(only(faster).verdict, Verdict::kImprovement);
  // More bandwidth is an improvement too.
  const auto more = compare_records(Json::array({record("b", "busbw", 10, {9.8, 9.9, 10, 10.1, 10.2})}),
                                    Json::array({record("c", "busbw", 12, {11.8, 11.9, 12, 12.1, 12.2})}), {});
  EXPECT_EQ(only(more).verdict, Verdict::kImprovement);
}

TEST(CompareNoise, ABigChangeInsideTheNoiseIsUnchanged) {
  // 20% lower median, but the samples of both sides scatter over a factor of 3 and overlap.
  const auto rows = compare_records(Json::array({record("b", "busbw", 10, {5, 8, 10, 12, 15})}),
                                    Json::array({record("c", "busbw", 8, {4, 7, 8, 11, 14})}), {});
  EXPECT_NEAR(only(rows).change_pct, -20, 1e-9);
  EXPECT_LT(only(rows).band_low_pct, 0);
  EXPECT_GT(only(rows).band_high_pct, 0);
  EXPECT_EQ(only(rows).verdict, Verdict::kUnchanged);
}

TEST(CompareNoise, MannWhitneyOrderStatisticsMatchTheTables) {
  // k = the two-sided 5% critical value of U + 1 (published tables); 0 where 95% is out of reach.
  EXPECT_EQ(mann_whitney_k(3, 3), 0u);
  EXPECT_EQ(mann_whitney_k(2, 7), 0u);
  EXPECT_EQ(mann_whitney_k(2, 8), 1u);
  EXPECT_EQ(mann_whitney_k(4, 4), 1u);
  EXPECT_EQ(mann_whitney_k(3, 5), 1u);
  EXPECT_EQ(mann_whitney_k(5, 5), 3u);
  EXPECT_EQ(mann_whitney_k(10, 10), 24u);
  EXPECT_EQ(mann_whitney_k(20, 20), 128u);
  EXPECT_EQ(mann_whitney_k(50, 50), 966u);
  EXPECT_EQ(mann_whitney_k(60, 60), 1427u);  // normal approximation
}

TEST(CompareNoise, BandIsTheHodgesLehmannIntervalOfTheRatio) {
  // 4 and 4 values: k = 1, the interval is the smallest and largest pairwise ratio.
  auto ci = ratio_interval({1, 2, 3, 4}, {2, 4, 6, 8});
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->low, 2.0 / 4, 1e-12);
  EXPECT_NEAR(ci->high, 8.0 / 1, 1e-12);
  // 5 and 5: k = 3; the 25 ratios are 0.8, 0.9, 1.0, 1.1, 1.2, five times each.
  ci = ratio_interval({10, 10, 10, 10, 10}, {8, 9, 10, 11, 12});
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->low, 0.8, 1e-12);
  EXPECT_NEAR(ci->high, 1.2, 1e-12);
  EXPECT_FALSE(ratio_interval({1, 2, 3}, {1, 2, 3}));  // too few for 95%
  EXPECT_FALSE(ratio_interval({1, 2, 3, 0}, {1, 2, 3, 4}));
  const auto rows = compare_records(Json::array({record("b", "busbw", 10, {10, 10, 10, 10, 10})}),
                                    Json::array({record("c", "busbw", 10, {8, 9, 10, 11, 12})}), {});
  EXPECT_NEAR(only(rows).band_low_pct, -20, 1e-9);
  EXPECT_NEAR(only(rows).band_high_pct, 20, 1e-9);
}

TEST(CompareNoise, AnOutlierSampleDoesNotHideARegression) {
  // One sample of the baseline hit a stall; a mean-and-deviation band would span 0.
  std::vector<double> base(9, 10.0), cand(10, 5.0);
  base.push_back(0.1);
  const auto rows =
      compare_records(Json::array({record("b", "busbw", 10, base)}), Json::array({record("c", "busbw", 5, cand)}), {});
  EXPECT_LT(only(rows).band_high_pct, 0);
  EXPECT_EQ(only(rows).verdict, Verdict::kRegression);
}

TEST(CompareNoise, SamplesOfEveryRoundArePooled) {
  // Each run is steady, but the runs disagree with each other: pooled, their samples overlap.
  Json base = Json::array(), cand = Json::array();
  for (double v : {10.0, 14.0, 6.0}) base.push_back(record("b", "busbw", v, {v, v, v}));
  for (double v : {8.0, 12.0, 5.0}) cand.push_back(record("c", "busbw", v, {v, v, v}));
  const auto rows = compare_records(base, cand, {});
  EXPECT_EQ(only(rows).baseline_records, 3);
  EXPECT_EQ(only(rows).baseline_samples, 9u);
  EXPECT_DOUBLE_EQ(*only(rows).baseline, 10);
  EXPECT_DOUBLE_EQ(*only(rows).candidate, 8);
  EXPECT_LT(only(rows).band_low_pct, 0);
  EXPECT_GT(only(rows).band_high_pct, 0);
  EXPECT_EQ(only(rows).verdict, Verdict::kUnchanged);
}

TEST(CompareNoise, WithoutAnySpreadTheToleranceDecides) {
  const auto rows =
      compare_records(Json::array({record("b", "busbw", 10)}), Json::array({record("c", "busbw", 9)}), {});
  EXPECT_TRUE(std::isnan(only(rows).band_low_pct));
  EXPECT_EQ(only(rows).verdict, Verdict::kRegression);  // -10% beyond the default 5%
}

TEST(CompareTolerance, OptionAppliesWhereNoReferenceGivesOne) {
  const Json base = Json::array({record("b", "busbw", 10)}), cand = Json::array({record("c", "busbw", 9.3)});
  EXPECT_EQ(only(compare_records(base, cand, {})).verdict, Verdict::kRegression);  // -7% vs 5%
  CompareOptions generous;
  generous.tolerance_pct = 10;
  const auto rows = compare_records(base, cand, generous);
  EXPECT_EQ(only(rows).verdict, Verdict::kUnchanged);
  EXPECT_EQ(only(rows).tolerance_from, "option");
  EXPECT_DOUBLE_EQ(only(rows).tolerance_pct, 10);
}

TEST(CompareTolerance, TheReferenceWinsOverTheOption) {
  // A reference passing at >= 9.8 of a 10 target: 2% on the worse (lower) side.
  Json c = record("c", "busbw", 9.3);
  c["references"] = Json::array({{{"target", 10}, {"unit", "GB/s"}, {"lower_bound", 9.8}, {"outcome", "fail"}}});
  CompareOptions generous;
  generous.tolerance_pct = 10;
  const auto rows = compare_records(Json::array({record("b", "busbw", 10)}), Json::array({c}), generous);
  EXPECT_EQ(only(rows).tolerance_from, "reference");
  EXPECT_NEAR(only(rows).tolerance_pct, 2, 1e-9);
  EXPECT_EQ(only(rows).verdict, Verdict::kRegression);
}

TEST(CompareTolerance, ReferenceToleranceIsTheWorseSidesBound) {
  Json t = record("c", "time", 10);
  t["references"] = Json::array(
      {{{"target", 100}, {"lower_bound", 50}, {"upper_bound", 120}}, {{"target", 100}, {"upper_bound", 110}}});
  EXPECT_NEAR(*reference_tolerance_pct(t), 10, 1e-9);  // the strictest upper bound (lower is better)
  Json bw = record("c", "busbw", 10);
  bw["references"] = Json::array({{{"target", 100}, {"upper_bound", 120}}});
  EXPECT_FALSE(reference_tolerance_pct(bw));  // only the better side is bounded
  EXPECT_FALSE(reference_tolerance_pct(record("c", "busbw", 10)));
}

TEST(CompareRows, MissingNewAndFailedCandidatePoints) {
  Json failed = record("c", "busbw", 10, {}, 2048);
  failed["status"] = "failed";
  failed["reason"] = "3 wrong elements in the output";
  failed["value"] = nullptr;
  const auto rows = compare_records(
      Json::array({record("b", "busbw", 10, {}, 1024), record("b", "busbw", 10, {}, 2048)}),
      Json::array({record("c", "busbw", 10, {}, 1024), failed, record("c", "busbw", 10, {}, 4096)}), {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].verdict, Verdict::kMissing);
  EXPECT_EQ(rows[0].key["point"]["size"], 2048);
  EXPECT_NE(rows[0].note.find("3 wrong elements"), std::string::npos);
  EXPECT_EQ(rows[1].verdict, Verdict::kUnchanged);
  EXPECT_EQ(rows[2].verdict, Verdict::kNew);
  EXPECT_EQ(rows[2].key["point"]["size"], 4096);
  const auto n = count_verdicts(rows);
  EXPECT_EQ(n.at(Verdict::kMissing), 1);
  EXPECT_EQ(n.at(Verdict::kRegression), 0);
}

TEST(CompareRows, WorstFirstAndMetricFilter) {
  const Json base = Json::array(
      {record("b", "busbw", 10, {}, 1024), record("b", "busbw", 10, {}, 2048), record("b", "time", 10, {}, 1024)});
  const Json cand = Json::array(
      {record("c", "busbw", 9, {}, 1024), record("c", "busbw", 5, {}, 2048), record("c", "time", 13, {}, 1024)});
  const auto rows = compare_records(base, cand, {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NEAR(rows[0].change_pct, -50, 1e-9);
  EXPECT_EQ(rows[1].metric, "time");  // +30% time is the second worst
  EXPECT_NEAR(rows[2].change_pct, -10, 1e-9);
  CompareOptions only_time;
  only_time.metric = "time";
  EXPECT_EQ(compare_records(base, cand, only_time).size(), 1u);
}

TEST(CompareRows, IgnoreParamsMatchesWhatAVariantChanged) {
  Json c = record("c", "busbw", 10);
  c["params"]["blocking"] = true;
  CompareOptions o;
  EXPECT_EQ(compare_records(Json::array({record("b", "busbw", 10)}), Json::array({c}), o).size(), 2u);
  o.ignore_params = {"blocking"};
  EXPECT_EQ(compare_records(Json::array({record("b", "busbw", 10)}), Json::array({c}), o).size(), 1u);
}

TEST(CompareFile, ReadsJsonLinesAndArrays) {
  const std::string line = record("b", "busbw", 10).dump();
  EXPECT_EQ(parse_records_text(line + "\n\n" + line + "\n", "f").size(), 2u);
  EXPECT_EQ(parse_records_text("[" + line + "," + line + "]", "f").size(), 2u);
}

TEST(CompareFile, ErrorsNameFileLineAndField) {
  const std::string line = record("b", "busbw", 10).dump();
  auto message = [](const std::string& text) {
    try {
      parse_records_text(text, "base.jsonl");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(line + "\n{oops\n").rfind("base.jsonl:2: not a JSON record", 0), 0u) << message(line + "\n{oops\n");
  Json bad = record("b", "busbw", 10);
  bad["value"] = "fast";
  EXPECT_EQ(message(line + "\n" + line + "\n" + bad.dump()),
            "base.jsonl:3: field 'value': an ok point record needs a number");
  bad.erase("metric");
  EXPECT_EQ(message(bad.dump()), "base.jsonl:1: field 'metric': missing or not a string");
  // What reports and comparisons group by: a record without it is refused by name, not a crash.
  Json anon = record("b", "busbw", 10);
  anon.erase("workload");
  EXPECT_EQ(message(anon.dump()), "base.jsonl:1: field 'workload': missing or not a string");
  Json bare = record("b", "busbw", 10);
  bare.erase("params");
  EXPECT_EQ(message(bare.dump()), "base.jsonl:1: field 'params': missing or not an object");
  bare["params"] = Json::object(), bare["details"] = 3;
  EXPECT_EQ(message(bare.dump()), "base.jsonl:1: field 'details': not an object");
  // What tables label and order by: a collective's size that is not a number, a unit not a string.
  Json sized = record("b", "busbw", 10);
  sized["point"] = Json{{"size", "1M"}};
  EXPECT_EQ(message(sized.dump()), "base.jsonl:1: field 'point.size': not a number (bytes)");
  sized["point"]["size"] = 1048576;
  sized["unit"] = 7;
  EXPECT_EQ(message(sized.dump()), "base.jsonl:1: field 'unit': not a string");
  // Every other field the readers type, as the reader names it.
  Json placed = record("b", "busbw", 10);
  placed["placement"] = Json{{"gpus", "2"}};
  EXPECT_EQ(message(placed.dump()), "base.jsonl:1: 'placement.gpus' must be an integer");
  EXPECT_EQ(message("[1]"), "base.jsonl: record 1 of the array: expected a JSON object (one result record)");
  EXPECT_EQ(message("[\n" + line + ",\n]").rfind("base.jsonl:3:", 0), 0u) << message("[\n" + line + ",\n]");
  EXPECT_EQ(message(" \n"), "base.jsonl: no records (empty file)");
}

// Host `host`'s busbw of one point: one run on that host alone.
Json on_host(const std::string& host, double value, const std::string& metric = "busbw") {
  Json r = record("acceptance", metric, value);
  r["placement"]["hosts"] = Json::array({host});
  return r;
}

TEST(NodeOutliers, FlagsTheHostFarUnderTheMedianOfTheOthers) {
  const Json recs = Json::array({on_host("n1", 100), on_host("n2", 98), on_host("n3", 102), on_host("n4", 101),
                                 on_host("n7", 80), on_host("n5", 95)});
  const auto out = find_node_outliers(recs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].host, "n7");
  EXPECT_EQ(out[0].metric, "busbw");
  EXPECT_EQ(out[0].group_size, 6u);
  EXPECT_DOUBLE_EQ(out[0].group_median, 99);
  EXPECT_NEAR(out[0].deviation_pct, (80 - 99) / 99.0 * 100, 1e-9);
  // n5 is 4% under: flagged only with a threshold under that.
  EXPECT_EQ(find_node_outliers(recs, 3).size(), 2u);
  EXPECT_EQ(find_node_outliers(recs, 25).size(), 0u);
}

TEST(NodeOutliers, DirectionComesFromBetter) {
  // Time: the slow host has the highest value; a fast host is never an outlier.
  const Json recs = Json::array(
      {on_host("a", 10, "time"), on_host("b", 10, "time"), on_host("c", 15, "time"), on_host("d", 5, "time")});
  const auto out = find_node_outliers(recs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].host, "c");
  EXPECT_NEAR(out[0].deviation_pct, 50, 1e-9);
}

TEST(NodeOutliers, FewerThanThreeHostsGiveNone) {
  EXPECT_TRUE(find_node_outliers(Json::array({on_host("a", 100), on_host("b", 10)})).empty());
  // Several rounds on one host are that host's one figure (their median), not more hosts.
  EXPECT_TRUE(find_node_outliers(Json::array({on_host("a", 100), on_host("a", 100), on_host("b", 10)})).empty());
}

TEST(NodeOutliers, RunsSpanningHostsAreNoNodesFigure) {
  Json wide = on_host("x", 10);
  wide["placement"]["hosts"] = Json::array({"x", "y"});
  wide["placement"]["nodes"] = 2;
  EXPECT_EQ(single_host(wide), "");
  EXPECT_TRUE(find_node_outliers(Json::array({on_host("a", 100), on_host("b", 100), wide})).empty());
  // Without placement.hosts the ranks' hostnames say it.
  Json env = on_host("z", 10);
  env["placement"].erase("hosts");
  env["environment"] = {{"hostnames", {"z"}}};
  EXPECT_EQ(single_host(env), "z");
  const auto out = find_node_outliers(Json::array({on_host("a", 100), on_host("b", 100), env}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].host, "z");
}

TEST(NodeOutliers, GroupsArePointsAndHostsMedianTheirRounds) {
  // Two sizes: the 2048 group has only two hosts. n3's rounds (60, 100, 100) give 100.
  const Json recs = Json::array({on_host("n1", 100), on_host("n2", 100), on_host("n3", 60), on_host("n3", 100),
                                 on_host("n3", 100), record("acceptance", "busbw", 1, {}, 2048), on_host("n4", 40)});
  Json other = on_host("n9", 1);
  other["point"]["size"] = 2048;
  Json all = recs;
  all.push_back(other);
  const auto out = find_node_outliers(all);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].host, "n4");
  EXPECT_EQ(out[0].group_size, 4u);
}

}  // namespace
}  // namespace scalebench
