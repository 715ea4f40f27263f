// The report's "Predicted against measured" section: the scores of the report's experiments, per
// size and as the worst error from 1 MiB up against the goal, in every format; none for a
// prediction that no reported experiment scored.
#include <gtest/gtest.h>

#include "report/build_report.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

// One busbw record of the experiment that measured the prediction.
Json record(const std::string& experiment) {
  return Json{{"schema_version", 1},
              {"run_id", 7},
              {"experiment", experiment},
              {"workload", "collective"},
              {"variant", "default"},
              {"params", Json{{"op", "all_reduce"}, {"backend", "mpi"}}},
              {"placement", Json{{"nodes", 4}, {"ranks", 4}, {"ranks_per_node", 1}, {"gpus", 0}}},
              {"point", Json{{"size", 1 << 20}}},
              {"metric", "busbw"},
              {"unit", "GB/s"},
              {"better", "higher"},
              {"value", 10.0},
              {"status", "ok"}};
}

// A prediction at 4 nodes scored by `by`: 64 KiB off by 50% (below 1 MiB: not judged), 1 MiB by
// -5%, 4 MiB by `at_4mib` %.
Json predictions(const std::string& by, double at_4mib) {
  auto size = [](long long s, double predicted, double measured) {
    return Json{{"size", s},
                {"predicted", predicted},
                {"measured", measured},
                {"error_pct", (predicted - measured) / measured * 100},
                {"values", {measured * 0.9, measured, measured * 1.1}}};
  };
  Json score{{"experiment_id", 2},
             {"experiment", by},
             {"runs", {7}},
             {"scored_at", 100.0},
             {"goal_pct", 10.0},
             {"scored_from_bytes", 1048576.0},
             {"max_abs_error_pct", std::max(5.0, std::abs(at_4mib))},
             {"met", std::max(5.0, std::abs(at_4mib)) <= 10},
             {"sizes", {size(65536, 3, 2), size(1 << 20, 9.5, 10), size(4 << 20, 10 * (1 + at_4mib / 100), 10)}}};
  return Json::array(
      {Json{{"id", 3},
            {"created_at", 50.0},
            {"experiments", Json::array({Json{{"id", 1}, {"name", "ar-2-3"}}})},
            {"workload", "collective"},
            {"variant", "default"},
            {"op", "all_reduce"},
            {"params", Json{{"op", "all_reduce"}, {"backend", "mpi"}}},
            {"ranks_per_node", 1},
            {"nodes", 4},
            {"fit_nodes", {2, 3}},
            {"record_ids", {1, 2}},
            {"model", Json{{"step_latency_us", 5.0},
                           {"bus_bandwidth_by_size",
                            Json::array({Json{{"size", 65536}, {"gbps", 9.0}}, Json{{"size", 1 << 20}, {"gbps", 10.0}},
                                         Json{{"size", 4 << 20}, {"gbps", 10.0}}})},
                           {"points", 4},
                           {"rank_counts", 2},
                           {"max_fit_error_pct", 2.5}}},
            {"predicted", Json::array()},
            {"scores", Json::array({score})}}});
}

const Section* section(const Report& rep, const std::string& id) {
  for (const Section& s : rep.sections)
    if (s.id == id) return &s;
  return nullptr;
}

TEST(PredictionsSection, PerSizeRowsAndTheWorstErrorAgainstTheGoal) {
  ReportOptions opt;
  opt.predictions = predictions("ar-4", 8);
  const Report rep = build_report(Json::array({record("ar-4")}), opt);
  const Section* s = section(rep, "predicted-vs-measured");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->title, "Predicted against measured");
  EXPECT_EQ(&rep.sections.back(), s) << "after the experiments";
  ASSERT_EQ(s->tables.size(), 2u);
  const Table& summary = s->tables[0];
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0], (std::vector<std::string>{"3", "all_reduce, variant default, 1 rank per node", "4", "2, 3",
                                                       "ar-2-3", "2.5", "ar-4", "8.0", "met"}));
  const Table& sizes = s->tables[1];
  ASSERT_EQ(sizes.rows.size(), 3u);
  EXPECT_EQ(sizes.rows[0],
            (std::vector<std::string>{"3", "all_reduce", "4", "64KiB", "3.000", "2.000", "+50.0", "ar-4"}));
  EXPECT_EQ(sizes.rows[1].at(6), "-5.0");
  EXPECT_EQ(sizes.rows[2].at(6), "+8.0");
  // The goal stated, and the verdict.
  EXPECT_NE(s->paragraphs.at(0).find("within 10% at every size from 1 MiB up"), std::string::npos) << s->paragraphs[0];
  EXPECT_EQ(s->paragraphs.at(1),
            "Prediction 3 (all_reduce, variant default, 1 rank per node, at 4 nodes from nodes 2, 3) against ar-4: "
            "max |error| from 1 MiB 8.0%, within the 10% goal.");
  // A chart of both curves, the measured one with its spread.
  ASSERT_EQ(s->charts.size(), 1u);
  const Chart& c = s->charts[0];
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_TRUE(c.series[1].dashed);
  EXPECT_DOUBLE_EQ(c.series[0].points[0].low, 1.8);
  EXPECT_DOUBLE_EQ(c.series[0].points[0].high, 2.2);
  EXPECT_TRUE(c.warning.empty());

  // Every format carries it.
  EXPECT_NE(markdown_report(rep).find("## Predicted against measured"), std::string::npos);
  EXPECT_NE(html_report(rep).find("<h2>Predicted against measured</h2>"), std::string::npos);
  EXPECT_NE(json_report(rep).find("\"predicted-vs-measured\""), std::string::npos);
  EXPECT_NE(csv_table(sizes).find("3,all_reduce,4,64KiB,3.000,2.000,+50.0,ar-4"), std::string::npos);
}

TEST(PredictionsSection, AMissedGoalIsSaid) {
  ReportOptions opt;
  opt.predictions = predictions("ar-4", -30);
  const Report rep = build_report(Json::array({record("ar-4")}), opt);
  const Section* s = section(rep, "predicted-vs-measured");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->tables[0].rows[0].back(), "missed");
  EXPECT_NE(s->paragraphs.at(1).find("max |error| from 1 MiB 30.0%, outside the 10% goal."), std::string::npos);
  EXPECT_EQ(s->charts[0].warning, "Missed the goal: max |error| from 1 MiB 30.0% (goal 10%)");
}

TEST(PredictionsSection, APredictionOfTheSingleBandwidthModelStillShows) {
  // Stored before one bus bandwidth per size: its model holds one bus_bandwidth_gbps.
  ReportOptions opt;
  opt.predictions = predictions("ar-4", 8);
  Json& model = opt.predictions[0]["model"];
  model.erase("bus_bandwidth_by_size");
  model["bus_bandwidth_gbps"] = 10.0;
  const Report rep = build_report(Json::array({record("ar-4")}), opt);
  const Section* s = section(rep, "predicted-vs-measured");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->tables[0].rows[0].at(5), "2.5");
  EXPECT_EQ(s->tables[1].rows.size(), 3u);
  EXPECT_EQ(s->paragraphs.at(1),
            "Prediction 3 (all_reduce, variant default, 1 rank per node, at 4 nodes from nodes 2, 3) against ar-4: "
            "max |error| from 1 MiB 8.0%, within the 10% goal. It was made by an earlier model, with one B for all "
            "sizes.");
}

TEST(PredictionsSection, NoneWhenNoReportedExperimentScoredOne) {
  ReportOptions opt;
  opt.predictions = predictions("ar-4", 8);
  EXPECT_EQ(section(build_report(Json::array({record("ar-2-3")}), opt), "predicted-vs-measured"), nullptr);
  EXPECT_EQ(section(build_report(Json::array({record("ar-4")})), "predicted-vs-measured"), nullptr);
}

}  // namespace
}  // namespace scalebench
