// The report's collective figures: time, algbw and busbw against message size, a table row for
// every size, overlays of other runs, host-rank wording, and scaling models that warn when they
// are extrapolated from fewer than 3 measured counts or a poor fit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/build_report.hpp"
#include "report/chart_render.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

// One all_reduce record as the collective workload stores it.
Json collective(const std::string& experiment, int workers, bool gpus, const std::string& metric, double size,
                double value) {
  const std::string unit = metric == "time" ? "us" : "GB/s";
  return Json{{"schema_version", 1},
              {"run_id", workers},
              {"experiment", experiment},
              {"workload", "collective"},
              {"variant", "nvlink"},
              {"params", {{"op", "all_reduce"}, {"dtype", "float32"}, {"reduce_op", "sum"}}},
              {"placement", {{"nodes", 1}, {"ranks", workers}, {"gpus", gpus ? workers : 0}}},
              {"point", {{"size", size}}},
              {"metric", metric},
              {"unit", unit},
              {"better", metric == "time" ? "lower" : "higher"},
              {"value", value},
              {"stats", {{"n", 1}, {"median", value}, {"min", value}, {"max", value}, {"samples", {value}}}},
              {"status", "ok"}};
}

// The three records of every size from 1 KiB to 1 GiB at each worker count, timed exactly as an
// alpha-beta model (10 us, 100 GB/s of bus bandwidth) says, times `noise(size)`.
Json curves(
    const std::string& experiment, const std::vector<int>& counts, bool gpus,
    double (*noise)(double) = [](double) { return 1.0; }) {
  Json out = Json::array();
  for (int n : counts)
    for (double s = 1024; s <= (1 << 30); s *= 8) {
      const double factor = 2.0 * (n - 1) / n;
      const double t = (10.0 + s * factor / 100e3) * noise(s);
      out.push_back(collective(experiment, n, gpus, "time", s, t));
      out.push_back(collective(experiment, n, gpus, "algbw", s, s / t / 1e3));
      out.push_back(collective(experiment, n, gpus, "busbw", s, s / t / 1e3 * factor));
    }
  return out;
}

const Section& experiment(const Report& r) { return r.sections.back(); }

const Chart* chart_ending(const Section& s, const std::string& suffix) {
  for (const Chart& c : s.charts)
    if (c.id.size() >= suffix.size() && c.id.compare(c.id.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &c;
  return nullptr;
}

const Table* table_ending(const Section& s, const std::string& suffix) {
  for (const Table& t : s.tables)
    if (t.id.size() >= suffix.size() && t.id.compare(t.id.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &t;
  return nullptr;
}

TEST(CollectiveReport, TimeAlgbwAndBusbwChartsWithARowPerSize) {
  const Report r = build_report(curves("sweep", {1, 2, 4}, true));
  const Section& s = experiment(r);
  const Chart* time = chart_ending(s, "-time-all-reduce-float32-sum");
  const Chart* algbw = chart_ending(s, "-algbw-all-reduce-float32-sum");
  const Chart* busbw = chart_ending(s, "-busbw-all-reduce-float32-sum");
  ASSERT_NE(time, nullptr);
  ASSERT_NE(algbw, nullptr);
  ASSERT_NE(busbw, nullptr);
  // One GPU's latency and algbw are measured; its busbw is 0 by definition and gets no curve.
  EXPECT_EQ(time->series.size(), 3u);
  EXPECT_EQ(algbw->series.size(), 3u);
  EXPECT_EQ(busbw->series.size(), 2u);
  EXPECT_TRUE(time->log_y);
  EXPECT_EQ(time->y_label, "time (µs)");

  const Table* per_size = table_ending(s, "-per-size");
  ASSERT_NE(per_size, nullptr);
  ASSERT_EQ(per_size->rows.size(), 3u * 7u);  // 3 counts x 1 KiB .. 1 GiB in steps of 8
  // columns: collective, series, size, time µs, algbw GB/s, busbw GB/s, busbw min – max, cv %, samples, % of peak
  const auto& first = per_size->rows.front();
  EXPECT_EQ(first[1], "nvlink · 1 GPU");
  EXPECT_EQ(first[2], "1KiB");
  EXPECT_EQ(first[3], "10.00");
  EXPECT_EQ(first[4], format_number(1024 / 10.0 / 1e3));
  EXPECT_EQ(first[5], "0.0000");
  bool four_gpus_at_4mib = false;
  for (const auto& row : per_size->rows)
    if (row[1] == "nvlink · 4 GPUs" && row[2] == "4MiB") {
      four_gpus_at_4mib = true;
      const double t = 10.0 + 4194304 * 1.5 / 100e3;
      EXPECT_EQ(row[3], format_number(t));
      EXPECT_EQ(row[5], format_number(4194304 / t / 1e3 * 1.5));
    }
  EXPECT_TRUE(four_gpus_at_4mib);
}

TEST(CollectiveReport, HostRanksAreCalledRanks) {
  const Report r = build_report(curves("host", {2, 4, 8}, false));
  const Section& s = experiment(r);
  const Table* model = table_ending(s, "-alpha-beta");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->title, "Alpha-beta model per collective and rank count");
  EXPECT_EQ(model->note.find("GPU"), std::string::npos) << model->note;
  const Chart* scaling = chart_ending(s, "-busbw-scaling-all-reduce-float32-sum");
  ASSERT_NE(scaling, nullptr);
  EXPECT_EQ(scaling->x_label, "ranks");
  EXPECT_NE(scaling->title.find("by rank count"), std::string::npos) << scaling->title;
  EXPECT_EQ(experiment(r).tables.front().rows.front()[1], "nvlink · 2 ranks");
}

TEST(CollectiveReport, ThreeCountsWithAGoodFitExtrapolateWithoutWarning) {
  const Report r = build_report(curves("good", {2, 4, 8}, true));
  const Section& s = experiment(r);
  const Chart* scaling = chart_ending(s, "-busbw-scaling-all-reduce-float32-sum");
  ASSERT_NE(scaling, nullptr);
  EXPECT_EQ(scaling->warning, "");
  EXPECT_EQ(scaling->series.back().name, "nvlink model");
  for (const auto& p : s.paragraphs) EXPECT_EQ(p.find("Warning"), std::string::npos) << p;
  const Table* model = table_ending(s, "-alpha-beta");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->rows.size(), 3u);
  for (const auto& row : model->rows) EXPECT_EQ(row.back(), "supported");
}

TEST(CollectiveReport, OneMeasuredCountIsExtrapolatedOnlyWithAWarning) {
  const Report r = build_report(curves("one", {1, 2}, true));
  const Section& s = experiment(r);
  const Chart* scaling = chart_ending(s, "-busbw-scaling-all-reduce-float32-sum");
  ASSERT_NE(scaling, nullptr);
  EXPECT_EQ(scaling->warning, "Warning: model extrapolated from 1 measured GPU count (fewer than 3)");
  EXPECT_EQ(scaling->series.back().name, "nvlink model (a guess)");
  ASSERT_EQ(s.paragraphs.size(), 1u);
  EXPECT_EQ(s.paragraphs[0].rfind("Warning: all_reduce float32 sum busbw of nvlink beyond 2 GPUs", 0), 0u)
      << s.paragraphs[0];
  const Table* model = table_ending(s, "-alpha-beta");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->rows.size(), 1u);
  EXPECT_EQ(model->rows[0].back(), "a guess: 1 measured GPU count (fewer than 3)");
  // The warning is drawn: in the SVG under the title.
  EXPECT_NE(chart_svg(*scaling).find("model extrapolated from 1 measured GPU count"), std::string::npos);
}

TEST(CollectiveReport, APoorFitIsExtrapolatedOnlyWithAWarning) {
  // Times that swing by a factor of 3 from size to size: no line fits them.
  const Report r = build_report(
      curves("poor", {2, 4, 8}, true, [](double s) { return std::fmod(std::log2(s), 2) < 1 ? 3.0 : 0.4; }));
  const Section& s = experiment(r);
  const Table* model = table_ending(s, "-alpha-beta");
  ASSERT_NE(model, nullptr);
  for (const auto& row : model->rows) {
    ASSERT_LT(std::stod(row[4]), 0.9);
    EXPECT_EQ(row.back(), "a guess: R² " + row[4] + " (under 0.9)");
  }
  const Chart* scaling = chart_ending(s, "-busbw-scaling-all-reduce-float32-sum");
  ASSERT_NE(scaling, nullptr);
  EXPECT_NE(scaling->warning.find("(under 0.9)"), std::string::npos) << scaling->warning;
}

TEST(CollectiveReport, AnOverlayIsDashedInTheColourOfTheCurveItOverlays) {
  ReportOptions opt;
  opt.overlays.push_back({"baseline", curves("last-week", {2}, true)});
  const Report r = build_report(curves("today", {1, 2}, true), opt);
  const Section& s = experiment(r);
  const Chart* busbw = chart_ending(s, "-busbw-all-reduce-float32-sum");
  ASSERT_NE(busbw, nullptr);
  ASSERT_EQ(busbw->series.size(), 2u);
  const Series& over = busbw->series[1];
  EXPECT_EQ(over.name, "baseline: nvlink · 2 GPUs");
  EXPECT_TRUE(over.dashed);
  const std::vector<Color> colours = series_colours(*busbw);
  EXPECT_EQ(colours[1].r, colours[0].r);
  EXPECT_EQ(colours[1].g, colours[0].g);
  EXPECT_EQ(colours[1].b, colours[0].b);
  // The time chart has both of today's curves and the baseline's.
  const Chart* time = chart_ending(s, "-time-all-reduce-float32-sum");
  ASSERT_NE(time, nullptr);
  EXPECT_EQ(time->series.size(), 3u);
  ASSERT_FALSE(s.paragraphs.empty());
  EXPECT_NE(s.paragraphs[0].find("baseline (21 records)"), std::string::npos) << s.paragraphs[0];
  // Records of another collective overlay nothing, and say nothing.
  Json other = curves("other", {2}, true);
  for (auto& rec : other) rec["params"]["op"] = "all_gather";
  ReportOptions unrelated;
  unrelated.overlays.push_back({"other", other});
  const Report alone = build_report(curves("today", {1, 2}, true), unrelated);
  EXPECT_EQ(chart_ending(experiment(alone), "-busbw-all-reduce-float32-sum")->series.size(), 1u);
}

}  // namespace
}  // namespace scalebench
