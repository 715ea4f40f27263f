#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/scaling_model.hpp"
#include "report/build_report.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

// ---- scaling models -------------------------------------------------------------------------

TEST(AlphaBeta, RecoversStartupAndBandwidthFromExactTimes) {
  std::vector<double> sizes, times;
  for (double s = 8; s <= 1 << 30; s *= 8) {
    sizes.push_back(s);
    times.push_back(12.0 + s / 150e3);  // 12 us start-up, 150 GB/s (bytes per us = 150e3)
  }
  const AlphaBetaFit fit = fit_alpha_beta(sizes, times);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit.alpha_us, 12.0, 1e-6);
  EXPECT_NEAR(1 / fit.beta_us_per_byte, 150e3, 1e-3);
  EXPECT_NEAR(fit.r2, 1.0, 1e-9);
}

TEST(AlphaBeta, TooFewPointsIsNotAFit) {
  EXPECT_FALSE(fit_alpha_beta({1024}, {3.0}).ok());
  EXPECT_FALSE(fit_alpha_beta({}, {}).ok());
}

TEST(AlphaBeta, RingStepsPerCollective) {
  EXPECT_EQ(ring_steps("all_reduce", 4), 6);
  EXPECT_EQ(ring_steps("all_gather", 4), 3);
  EXPECT_EQ(ring_steps("reduce_scatter", 8), 7);
  EXPECT_EQ(ring_steps("alltoall", 2), 1);
  EXPECT_EQ(ring_steps("broadcast", 4), 3);
  EXPECT_EQ(ring_steps("sendrecv", 8), 1);
  EXPECT_EQ(ring_steps("all_reduce", 1), 0);
  EXPECT_EQ(ring_steps("no_such_op", 4), 0);
}

TEST(AlphaBeta, PredictionAtTheFittedCountReproducesTheMeasuredBusbw) {
  // all_reduce at 4 ranks: busbw = S/t * 2(n-1)/n.
  std::vector<double> sizes = {1 << 20, 1 << 24, 1 << 28}, times;
  for (double s : sizes) times.push_back(30.0 + s / 100e3);
  const AlphaBetaFit fit = fit_alpha_beta(sizes, times);
  const double s = 1 << 28;
  const double measured = s / (30.0 + s / 100e3) * 1.5 / 1e3;
  EXPECT_NEAR(predict_busbw(fit, "all_reduce", 4, 4, s), measured, measured * 1e-6);
  // More ranks: more start-up steps, the same bus bandwidth, so busbw can only fall.
  const double at64 = predict_busbw(fit, "all_reduce", 4, 64, s), at1024 = predict_busbw(fit, "all_reduce", 4, 1024, s);
  EXPECT_LT(at64, measured);
  EXPECT_LT(at1024, at64);
  EXPECT_GT(at1024, 0);
  EXPECT_EQ(predict_busbw(fit, "all_reduce", 4, 1, s), 0);
}

TEST(ThroughputModel, FitsComputePlusExposedAllReduce) {
  // t(N) = 2 ms + 0.1 ms * 2(N-1)/N per item and worker.
  std::vector<int> w = {1, 2, 4, 8};
  std::vector<double> tp;
  for (int n : w) tp.push_back(n / (2.0 + 0.1 * 2.0 * (n - 1) / n));
  const ThroughputModel m = fit_throughput(w, tp);
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(m.t1, 2.0, 1e-9);
  EXPECT_NEAR(m.c, 0.1, 1e-9);
  EXPECT_NEAR(predict_efficiency(m, 1), 1.0, 1e-12);
  EXPECT_NEAR(predict_efficiency(m, 1024), 2.0 / (2.0 + 0.2 * 1023 / 1024), 1e-9);
  EXPECT_LT(predict_efficiency(m, 16), predict_efficiency(m, 8) + 1e-12);
  EXPECT_NEAR(m.r2, 1.0, 1e-9) << "the model explains what it was made from";
  // Throughputs the model's shape cannot follow (up, down, up) leave much of their spread unexplained.
  EXPECT_LT(fit_throughput({1, 2, 4, 8}, {100, 190, 150, 700}).r2, 0.9);
}

TEST(ThroughputModel, PerfectScalingStaysAtFullEfficiency) {
  const ThroughputModel m = fit_throughput({1, 2, 4}, {100, 200, 400});
  ASSERT_TRUE(m.ok());
  EXPECT_NEAR(predict_efficiency(m, 1024), 1.0, 1e-9);
}

// ---- the report from records ----------------------------------------------------------------

Json throughput_record(const std::string& variant, int gpus, double value, Json params = Json::object()) {
  return Json{{"schema_version", 1},
              {"run_id", gpus},
              {"experiment", "train"},
              {"workload", "command"},
              {"variant", variant},
              {"round", 1},
              {"transport", ""},
              {"params", params},
              {"placement", {{"nodes", 1}, {"ranks", gpus}, {"gpus", gpus}}},
              {"point", Json::object()},
              {"metric", "throughput"},
              {"unit", "images/s"},
              {"better", "higher"},
              {"value", value},
              {"stats", {{"n", 1}, {"median", value}, {"min", value}, {"max", value}, {"samples", {value}}}},
              {"status", "ok"},
              {"reason", ""}};
}

const Table* find_table(const Report& r, const std::string& suffix) {
  for (const Table* t : all_tables(r))
    if (t->id.size() >= suffix.size() && t->id.compare(t->id.size() - suffix.size(), suffix.size(), suffix) == 0)
      return t;
  return nullptr;
}

TEST(Report, ThroughputScalingGivesSpeedupAndEfficiencyAgainstTheSmallestCount) {
  Json recs = Json::array({throughput_record("nvlink", 1, 1000), throughput_record("nvlink", 2, 1980),
                           throughput_record("nvlink", 4, 3800)});
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-scaling");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 3u);
  // columns: series, GPUs, throughput, unit, min – max, cv %, speedup, efficiency %, scaling
  EXPECT_EQ(t->rows[0][6], "1.000");
  EXPECT_EQ(t->rows[1][6], "1.980");
  EXPECT_EQ(t->rows[1][7], "99.00");
  EXPECT_EQ(t->rows[2][6], "3.800");
  EXPECT_EQ(t->rows[2][7], "95.00");
  EXPECT_EQ(t->rows[2][8], "weak");
  const Table* model = find_table(r, "-scaling-model");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->rows.size(), 1u);
  // Efficiency falls as the model extrapolates, and stays a percentage.
  const double e16 = std::stod(model->rows[0][2]), e1024 = std::stod(model->rows[0][5]);
  EXPECT_LE(e16, 100.0);
  EXPECT_LE(e1024, e16);
  EXPECT_GT(e1024, 0);
  // A chart with the measured line, the ideal line and the model.
  ASSERT_EQ(r.sections.back().charts.size(), 1u);
  EXPECT_EQ(r.sections.back().charts[0].series.size(), 3u);
  EXPECT_TRUE(r.sections.back().charts[0].series[1].dashed);
}

TEST(Report, AnOverlaidRunIsDashedInTheThroughputChart) {
  ReportOptions opt;
  opt.overlays.push_back(
      {"last-week", Json::array({throughput_record("nvlink", 1, 900), throughput_record("nvlink", 2, 1700)})});
  const Report r = build_report(Json::array({throughput_record("nvlink", 1, 1000), throughput_record("nvlink", 2, 1900),
                                             throughput_record("nvlink", 4, 3700)}),
                                opt);
  const Chart& c = r.sections.back().charts.at(0);
  const Series& over = c.series.back();
  EXPECT_EQ(over.name, "last-week: nvlink");
  EXPECT_TRUE(over.dashed);
  EXPECT_EQ(over.colour_of, "nvlink");
  ASSERT_EQ(over.points.size(), 2u);
  EXPECT_EQ(over.points[1].y, 1700);
  // The table is of the report's own runs only.
  EXPECT_EQ(find_table(r, "-scaling")->rows.size(), 3u);
}

TEST(Report, AThroughputRowSaysItsShareOfThePeak) {
  // One GPU's GEMM (the quick study on a one-GPU machine): its TFLOP/s against the FLOP peak.
  Json gemm = throughput_record("default", 1, 700);
  gemm["unit"] = "TFLOP/s", gemm["pct_of_peak"] = 70.75;
  const Report r = build_report(Json::array({gemm}));  // named: t points into it
  const Table* t = find_table(r, "-scaling");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->columns.back(), "% of peak");
  EXPECT_EQ(t->rows[0].back(), "70.75");
}

TEST(Report, AThroughputModelOfTwoCountsIsExtrapolatedOnlyWithAWarning) {
  const Report r =
      build_report(Json::array({throughput_record("nvlink", 1, 1000), throughput_record("nvlink", 2, 1900)}));
  const Table* model = find_table(r, "-scaling-model");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->rows.size(), 1u);
  EXPECT_EQ(model->rows[0].back(), "a guess: 2 measured GPU counts (fewer than 3)");
  const Chart& c = r.sections.back().charts.at(0);
  EXPECT_EQ(c.warning, "Warning: model extrapolated from 2 measured GPU counts (fewer than 3)");
  EXPECT_EQ(c.series[1].name, "nvlink model (a guess)");
  ASSERT_FALSE(r.sections.back().paragraphs.empty());
  EXPECT_EQ(r.sections.back().paragraphs[0].rfind("Warning: command throughput · nvlink beyond 2 GPUs", 0), 0u)
      << r.sections.back().paragraphs[0];
}

TEST(Report, StrongScalingIsTellByAGlobalBatchSplitOverGpus) {
  Json recs = Json::array({throughput_record("a", 1, 1000, {{"batch_size", 256}}),
                           throughput_record("a", 2, 1900, {{"batch_size", 128}}),
                           throughput_record("a", 4, 3500, {{"batch_size", 64}})});
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-scaling");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 3u);  // batch_size differs per count, yet the rows are one series
  EXPECT_EQ(t->rows[2][8], "strong");
}

TEST(Report, AVariantWithoutTheOneGpuRunScalesAgainstAnotherVariantsRun) {
  // pcie skips one GPU (no link to cross): its 4-GPU efficiency is against nvlink's 1-GPU run.
  Json recs = Json::array({throughput_record("nvlink", 1, 1000), throughput_record("nvlink", 4, 3960),
                           throughput_record("pcie", 2, 1950), throughput_record("pcie", 4, 3800)});
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-scaling");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 4u);
  EXPECT_EQ(t->rows[2][0], "command throughput · pcie");
  EXPECT_EQ(t->rows[2][7], "97.50");  // 1950 / (2 x 1000)
  EXPECT_EQ(t->rows[3][7], "95.00");
  EXPECT_EQ(t->rows[3][8], "weak (base: nvlink at 1)");
}

TEST(Report, APerGpuFigureScalesByItsValueTimesTheCount) {
  Json a = throughput_record("nvlink", 1, 1000), b = throughput_record("nvlink", 4, 990);
  a["metric"] = b["metric"] = "per_gpu";
  const Report r = build_report(Json::array({a, b}));
  const Table* t = find_table(r, "-scaling");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1][6], "3.960");
  EXPECT_EQ(t->rows[1][7], "99.00");
}

TEST(Report, ANodeWellUnderItsPeersIsFlagged) {
  Json recs = Json::array();
  const std::vector<std::pair<std::string, double>> nodes = {{"n1", 100}, {"n2", 101}, {"n3", 99}, {"n7", 78}};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Json r = throughput_record("default", 8, nodes[i].second);
    r["run_id"] = static_cast<int>(i + 1);
    r["placement"]["hosts"] = Json::array({nodes[i].first});
    recs.push_back(r);
  }
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-outliers");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0][0], "n7");
  EXPECT_EQ(t->rows[0][7], "4");
}

TEST(Report, FailedRunsAreListedWithTheirReason) {
  Json bad = throughput_record("a", 2, 0);
  bad["status"] = "failed", bad["value"] = nullptr, bad["metric"] = "run", bad["reason"] = "agent lost";
  const Report r = build_report(Json::array({throughput_record("a", 1, 10), bad}));
  const Table* t = find_table(r, "-problems");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0][4], "failed");
  EXPECT_EQ(t->rows[0][5], "agent lost");
}

TEST(Report, GpusHeldAtTheirPowerCapAreListedWithTheirShare) {
  // Two points of one 2-GPU run: GPU 1 power-capped 30 and 10 ms of 100 each (20%), GPU 0 for
  // 0.5 ms (under 1%: left out); a run without clock limits adds no row.
  auto timed = [](long long gpu, double power_ms) {
    Json r = throughput_record("nvlink", 2, 5.0);
    r["metric"] = "time", r["unit"] = "us", r["better"] = "lower";
    r["point"] = {{"gpu", gpu}};
    r["placement"]["devices"] = Json::array({{{"rank", 0}, {"host", "node-a"}}, {{"rank", 1}, {"host", "node-b"}}});
    r["details"] = {
        {"clock_limits", {{"window_ms", 100.0}, {"power_capped_ms", power_ms}, {"thermal_capped_ms", 0.0}}}};
    return r;
  };
  Json recs = Json::array({timed(0, 0.5), timed(1, 30), timed(0, 0), timed(1, 10), throughput_record("nvlink", 1, 10)});
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-clock-limits");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 1u);
  // columns: run, workload, variant, workers, GPU, host, measured s, power-capped %, thermal-capped %
  EXPECT_EQ(t->rows[0][4], "1");
  EXPECT_EQ(t->rows[0][5], "node-b");
  EXPECT_EQ(t->rows[0][6], "0.2000");
  EXPECT_EQ(t->rows[0][7], "20.00");
  EXPECT_EQ(t->rows[0][8], "0.0000");
  // Nobody capped: no table at all.
  const Report calm = build_report(Json::array({timed(0, 0), timed(1, 0.2)}));
  EXPECT_EQ(find_table(calm, "-clock-limits"), nullptr);
}

TEST(Report, ClockLimitRowsFollowTheRunNumbers) {
  // Runs 9 and 10, each with a capped GPU: run 9's row comes first (as text, "10" < "9").
  auto capped = [](long long run) {
    Json r = throughput_record("nvlink", 1, 5.0);
    r["run_id"] = run;
    r["metric"] = "time", r["unit"] = "us", r["better"] = "lower";
    r["point"] = {{"gpu", 0}};
    r["details"] = {{"clock_limits", {{"window_ms", 100.0}, {"power_capped_ms", 50.0}, {"thermal_capped_ms", 0.0}}}};
    return r;
  };
  const Report r = build_report(Json::array({capped(10), capped(9)}));
  const Table* t = find_table(r, "-clock-limits");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0][0], "9");
  EXPECT_EQ(t->rows[1][0], "10");
}

// One rank's time record of a training run: its step with all-reduces and, on several GPUs, the
// same step without them.
Json train_step_record(const std::string& variant, int run, int gpus, long long rank, double step_ms, double alone_ms,
                       const std::string& precision = "bf16") {
  Json r = throughput_record(variant, gpus, step_ms * 1e3, {{"precision", precision}});
  r["run_id"] = run, r["workload"] = "train";
  r["metric"] = "time", r["unit"] = "us", r["better"] = "lower";
  r["point"] = {{"precision", precision}, {"gpu", rank}};
  r["details"] = {{"step_ms", step_ms}};
  if (gpus > 1) r["details"]["step_ms_without_allreduce"] = alone_ms;
  return r;
}

TEST(Report, TrainingLossIsSplitIntoTheSlowestRankAloneAndCommunication) {
  Json recs = Json::array({train_step_record("nvlink", 1, 1, 0, 50.0, 0)});
  // 4 GPUs: GPU 3 is the slowest without communication (50.4 ms); the step takes 50.6.
  const std::vector<double> alone = {50.1, 50.2, 50.2, 50.4};
  for (long long g = 0; g < 4; ++g)
    recs.push_back(train_step_record("nvlink", 2, 4, g, g == 0 ? 50.6 : 50.55, alone[g]));
  // pcie has no 1-GPU run: nvlink's is its base.
  for (long long g = 0; g < 4; ++g) recs.push_back(train_step_record("pcie", 3, 4, g, 52.0, 50.0));
  const Report r = build_report(recs);
  const Table* t = find_table(r, "-training-split");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 2u);
  // columns: series, GPUs, runs, 1-GPU step, step, each rank alone, slowest GPU, beside the
  // others, communication, efficiency %, against the ranks alone %
  const auto& nv = t->rows[0];
  EXPECT_EQ(nv[0], "train · {\"precision\":\"bf16\"} · nvlink");
  EXPECT_EQ(nv[1], "4");
  EXPECT_EQ(nv[3], "50.00");
  EXPECT_EQ(nv[4], "50.60");  // the slowest rank's step
  EXPECT_EQ(nv[5], "50.10 – 50.40");
  EXPECT_EQ(nv[6], "3");
  EXPECT_EQ(nv[7], "0.4000");
  EXPECT_EQ(nv[8], "0.2000");
  EXPECT_EQ(nv[9], "98.81");   // 50.0 / 50.6
  EXPECT_EQ(nv[10], "99.60");  // 50.4 / 50.6
  const auto& pc = t->rows[1];
  EXPECT_NE(pc[0].find("pcie (1-GPU step of another variant)"), std::string::npos);
  EXPECT_EQ(pc[7], "0.0000");
  EXPECT_EQ(pc[8], "2.000");
  EXPECT_EQ(pc[9], "96.15");
  // Precision varies between experiments: named once, as the parameter, not again as the point.
  Json two = Json::array();
  for (const char* p : {"fp16", "bf16"}) {
    two.push_back(train_step_record("nvlink", 1, 1, 0, 50.0, 0, p));
    for (long long g = 0; g < 2; ++g) two.push_back(train_step_record("nvlink", 2, 2, g, 50.5, 50.1, p));
  }
  const Report split = build_report(two);
  const Table* by_precision = find_table(split, "-training-split");
  ASSERT_NE(by_precision, nullptr);
  ASSERT_EQ(by_precision->rows.size(), 2u);
  EXPECT_EQ(by_precision->rows[0][0], "train · precision=bf16 · nvlink");
  EXPECT_EQ(by_precision->rows[1][0], "train · precision=fp16 · nvlink");
  // Records without the split (another workload's times) make no such table.
  Json plain = Json::array({throughput_record("a", 1, 10), throughput_record("a", 2, 19)});
  EXPECT_EQ(find_table(build_report(plain), "-training-split"), nullptr);
}

TEST(Report, HtmlEscapesWhatRecordsSay) {
  Json rec = throughput_record("<script>alert(1)</script>", 1, 10);
  const std::string html = html_report(build_report(Json::array({rec})));
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

// ---- golden outputs -------------------------------------------------------------------------
// tests/data/report/records.jsonl holds real records: a host-memory quick study and the
// all_reduce points of a 4-GPU nvlink/pcie study with nccl-tests run beside it. Set
// SCALEBENCH_UPDATE_GOLDEN=1 to rewrite the expected files after a deliberate change.

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_golden(const std::filesystem::path& path, const std::string& actual) {
  if (std::getenv("SCALEBENCH_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(slurp(path), actual) << "differs from " << path << " (SCALEBENCH_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(ReportGolden, MarkdownCsvAndJsonOfRealRecords) {
  const std::filesystem::path dir = std::filesystem::path(SCALEBENCH_TEST_DATA) / "report";
  Json records = Json::array();
  std::istringstream lines(slurp(dir / "records.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) records.push_back(Json::parse(line));
  ASSERT_GT(records.size(), 100u);
  const Report r = build_report(records);
  expect_golden(dir / "golden" / "report.md", markdown_report(r));
  expect_golden(dir / "golden" / "report.json", json_report(r));
  for (const Table* t : all_tables(r)) expect_golden(dir / "golden" / "tables" / (t->id + ".csv"), csv_table(*t));
  // What the golden files must show, so that a rewrite cannot bless a broken report.
  const Table* ratio = find_table(r, "-nvlink-vs-pcie");
  ASSERT_NE(ratio, nullptr);
  EXPECT_GE(ratio->rows.size(), 6u);  // two variant pairs x three sizes
  const Table* largest = find_table(r, "nccl-tests-vs-scalebench-busbw-largest");
  ASSERT_NE(largest, nullptr);
  EXPECT_EQ(largest->rows.size(), 4u);  // 4 variants at 4 GPUs
  for (const auto& row : largest->rows) EXPECT_FALSE(row[8].empty()) << "% of peak missing";
  EXPECT_FALSE(r.topology.rows.empty());
}

}  // namespace
}  // namespace scalebench
