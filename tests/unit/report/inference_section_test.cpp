// The report's inference part: MLPerf's scenarios as a table with verdicts, the latency CDF and
// the Server scenario's p99 against the arrival rate. tests/data/report/infer-h200.jsonl holds
// real records: ResNet-50 fp16 on one H200 under the four scenarios and a Server search
// (docs/results/2026-11-30-infer-h200, calls 3 and 4).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/build_report.hpp"
#include "report/report_writers.hpp"
#include "tests/unit/report/report_lookup.hpp"

namespace scalebench {
namespace {
using test_support::find_chart;
using test_support::find_series;
using test_support::find_table;

Json infer_records() {
  std::ifstream in(std::filesystem::path(SCALEBENCH_TEST_DATA) / "report" / "infer-h200.jsonl");
  Json records = Json::array();
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) records.push_back(Json::parse(line));
  return records;
}

TEST(InferenceSection, EachRunsFigureLatencyAndVerdict) {
  const Json records = infer_records();
  ASSERT_EQ(records.size(), 5u);
  const Report rep = build_report(records, ReportOptions{});
  const Table* t = find_table(rep, "Inference scenarios");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 5u);
  // offline, server at 15,000 q/s, single_stream, multi_stream, the server search: in that order.
  EXPECT_EQ(t->rows[0].at(0), "resnet50 fp16 offline · batch ≤ 256 · 2 streams");
  EXPECT_EQ(t->rows[0].at(1), "28809");
  EXPECT_EQ(t->rows[2].at(1), "2.477");  // SingleStream's figure is its p90
  EXPECT_EQ(t->rows[2].at(4), "2.477");
  EXPECT_EQ(t->rows[3].at(5), "2.225");  // MultiStream's p99
  EXPECT_EQ(t->rows[4].at(1), "14602");  // the search's best rate within the bound
  for (const auto& row : t->rows) {
    EXPECT_EQ(row.at(9), "INVALID");
    EXPECT_NE(row.at(10).find("under the 600 s minimum"), std::string::npos) << row.at(10);
  }
  // Shown here and nowhere else: not among the other figures, not as a scaling curve.
  EXPECT_EQ(find_table(rep, "Other figures"), nullptr);
  ASSERT_EQ(rep.sections.back().charts.size(), 2u);
  EXPECT_EQ(rep.sections.back().charts[0].title, "Query latency, cumulative");
  EXPECT_NE(markdown_report(rep).find("Inference scenarios"), std::string::npos);
}

TEST(InferenceSection, LatencyCdfOfEveryRunWithQueriesToSpread) {
  Json records = infer_records();
  // A record with its CDF: drawn from those points; the older records from their percentiles.
  records[2]["details"]["latency_cdf"] =
      Json{{"percent", {0, 50, 90, 99, 100}}, {"ms", {2.4, 2.466, 2.477, 2.498, 5.525}}};
  const Report rep = build_report(records, ReportOptions{});
  const Chart* c = find_chart(rep, "Query latency, cumulative");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->log_x);
  ASSERT_EQ(c->series.size(), 4u) << "offline is one query: no curve";
  const Series* single = find_series(*c, "single_stream");
  ASSERT_NE(single, nullptr);
  ASSERT_EQ(single->points.size(), 5u);
  EXPECT_EQ(single->points.front().x, 2.4);
  EXPECT_EQ(single->points.front().y, 0);
  EXPECT_EQ(single->points[2].x, 2.477);
  EXPECT_EQ(single->points[2].y, 90);
  // Without a CDF, the record's p50, p90, p99, p99.9 and slowest query.
  const Series* multi = find_series(*c, "multi_stream");
  ASSERT_NE(multi, nullptr);
  ASSERT_EQ(multi->points.size(), 5u);
  EXPECT_EQ(multi->points[3].y, 99.9);
  EXPECT_EQ(multi->points[3].x, records[3]["details"]["latency_ms"]["p99_9"].get<double>());
  EXPECT_NE(find_series(*c, "server 15000 q/s"), nullptr);
  EXPECT_NE(find_series(*c, "server 14602 q/s (search)"), nullptr) << "a search's curve is that of its best rate";
}

TEST(InferenceSection, ServerP99AgainstArrivalRateBesideTheBound) {
  const Report rep = build_report(infer_records(), ReportOptions{});
  const Chart* c = find_chart(rep, "Server: p99 latency against the arrival rate");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->log_y);
  const Series* search = find_series(*c, "server search");
  ASSERT_NE(search, nullptr);
  ASSERT_EQ(search->points.size(), 6u);  // six trials, by rate
  for (std::size_t i = 1; i < search->points.size(); ++i) EXPECT_GT(search->points[i].x, search->points[i - 1].x);
  EXPECT_NEAR(search->points.front().x, 14602.2, 0.1);
  EXPECT_NEAR(search->points.front().y, 14.04, 0.01);
  EXPECT_GT(search->points.back().y, 100) << "far over capacity the backlog grows";
  const Series* fixed = find_series(*c, "server at fixed rates");
  ASSERT_NE(fixed, nullptr);
  ASSERT_EQ(fixed->points.size(), 1u);
  EXPECT_NEAR(fixed->points[0].y, 13.348, 0.001);
  const Series* bound = find_series(*c, "bound 15.00 ms");
  ASSERT_NE(bound, nullptr);
  EXPECT_TRUE(bound->dashed);
  EXPECT_EQ(bound->points.front().y, 15);
  EXPECT_EQ(bound->points.front().x, search->points.front().x);
  EXPECT_EQ(bound->points.back().x, search->points.back().x);
}

TEST(InferenceSection, NoneWithoutInferRuns) {
  Json records = infer_records();
  for (Json& r : records) r["workload"] = "train";
  EXPECT_EQ(find_table(build_report(records, ReportOptions{}), "Inference scenarios"), nullptr);
}

}  // namespace
}  // namespace scalebench
