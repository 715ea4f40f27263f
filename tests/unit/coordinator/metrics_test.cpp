#include "coordinator/metrics.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace scalebench {
namespace {

// The value of the one sample of metric `name` whose labels include each of `labels`
// (written as they appear in the text format, e.g. experiment="quick"); nullopt when none.
std::optional<double> sample(const std::string& text, const std::string& name,
                             const std::vector<std::string>& labels = {}) {
  std::istringstream in(text);
  std::string line;
  std::optional<double> found;
  int matches = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string metric = line.substr(0, line.find_first_of("{ "));
    if (metric != name) continue;
    const std::string label_part = line.find('{') == std::string::npos ? "" : line.substr(0, line.rfind('}') + 1);
    bool all = true;
    for (const auto& l : labels) all = all && label_part.find(l) != std::string::npos;
    if (!all) continue;
    ++matches;
    found = std::stod(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_LE(matches, 1) << "several samples of " << name << " match";
  return found;
}

// Distinct values of `label` across the samples of metric `name`.
std::set<std::string> label_values(const std::string& text, const std::string& name, const std::string& label) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string line;
  const std::string key = label + "=\"";
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) != 0) continue;
    auto p = line.find(key);
    if (p == std::string::npos) continue;
    p += key.size();
    out.insert(line.substr(p, line.find('"', p) - p));
  }
  return out;
}

Json record(const std::string& experiment, const std::string& metric, const std::string& unit, double value,
            std::uint64_t size = 1 << 20) {
  return Json{{"schema_version", 1},
              {"run_id", 1},
              {"experiment", experiment},
              {"workload", "collective"},
              {"variant", "pcie"},
              {"params", {{"op", "all_reduce"}, {"dtype", "float32"}, {"backend", "nccl"}, {"in_place", false}}},
              {"placement", {{"nodes", 1}, {"ranks", 2}, {"gpus", 2}}},
              {"point", {{"size", size}}},
              {"metric", metric},
              {"unit", unit},
              {"value", value},
              {"status", "ok"}};
}

const char* kBusbw = "scalebench_collective_busbw_bytes_per_second";

TEST(MetricName, UnitBecomesABaseUnitSuffix) {
  EXPECT_EQ(Metrics::result_metric_name("collective", "busbw", "GB/s"), "scalebench_collective_busbw_bytes_per_second");
  EXPECT_EQ(Metrics::result_metric_name("collective", "algbw", "MB/s"), "scalebench_collective_algbw_bytes_per_second");
  EXPECT_EQ(Metrics::result_metric_name("collective", "time", "us"), "scalebench_collective_time_seconds");
  EXPECT_EQ(Metrics::result_metric_name("training", "throughput", "samples/s"),
            "scalebench_training_throughput_samples_per_second");
}

TEST(MetricName, RatiosAndUnknownUnitsHaveNoSuffix) {
  EXPECT_EQ(Metrics::result_metric_name("collective", "efficiency", "ratio"), "scalebench_collective_efficiency");
  EXPECT_EQ(Metrics::result_metric_name("collective", "efficiency", ""), "scalebench_collective_efficiency");
  EXPECT_EQ(Metrics::result_metric_name("collective", "widgets", "widgets"), "scalebench_collective_widgets");
}

TEST(MetricName, CharactersPrometheusRejectsBecomeUnderscores) {
  EXPECT_EQ(Metrics::result_metric_name("my-workload", "p99.latency", "ms"),
            "scalebench_my_workload_p99_latency_seconds");
}

TEST(Metrics, ResultIsExportedInBaseUnitsWithItsLabels) {
  Metrics m;
  m.record_ingested(record("quick", "busbw", "GB/s", 12.5));
  const std::string text = m.text();
  EXPECT_NE(text.find(std::string("# TYPE ") + kBusbw + " gauge"), std::string::npos) << text;
  auto v = sample(text, kBusbw,
                  {"experiment=\"quick\"", "workload=\"collective\"", "variant=\"pcie\"", "nodes=\"1\"", "gpus=\"2\"",
                   "ranks=\"2\"", "op=\"all_reduce\"", "dtype=\"float32\"", "backend=\"nccl\"", "size=\"1048576\"",
                   "in_place=\"0\""});
  ASSERT_TRUE(v) << text;
  EXPECT_DOUBLE_EQ(*v, 12.5e9);
}

TEST(Metrics, MicrosecondsBecomeSeconds) {
  Metrics m;
  m.record_ingested(record("quick", "time", "us", 25));
  auto v = sample(m.text(), "scalebench_collective_time_seconds", {"experiment=\"quick\""});
  ASSERT_TRUE(v) << m.text();
  EXPECT_DOUBLE_EQ(*v, 25e-6);
  // The HELP names the unit the gauge is in, and the records' unit beside it.
  EXPECT_NE(m.text().find("# HELP scalebench_collective_time_seconds Latest median of time, in seconds (records "
                          "give us)"),
            std::string::npos)
      << m.text();
}

TEST(Metrics, ReferenceChecksAreCountedByOutcomeFromZero) {
  Metrics m;
  EXPECT_DOUBLE_EQ(*sample(m.text(), "scalebench_reference_checks_total", {"outcome=\"fail\""}), 0);
  m.references_checked(1, 2);
  EXPECT_DOUBLE_EQ(*sample(m.text(), "scalebench_reference_checks_total", {"outcome=\"pass\""}), 1);
  EXPECT_DOUBLE_EQ(*sample(m.text(), "scalebench_reference_checks_total", {"outcome=\"fail\""}), 2);
}

TEST(Metrics, SeriesHoldTheLatestValue) {
  Metrics m;
  m.record_ingested(record("quick", "busbw", "GB/s", 10));
  m.record_ingested(record("quick", "busbw", "GB/s", 20));
  EXPECT_DOUBLE_EQ(*sample(m.text(), kBusbw, {"experiment=\"quick\""}), 20e9);
}

TEST(Metrics, EachPointIsItsOwnSeries) {
  Metrics m;
  m.record_ingested(record("quick", "busbw", "GB/s", 10, 1024));
  m.record_ingested(record("quick", "busbw", "GB/s", 20, 2048));
  const std::string text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"1024\""}), 10e9);
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"2048\""}), 20e9);
}

TEST(Metrics, RecordsWithoutAValueAreCountedButNotExported) {
  Metrics m;
  Json failed = record("quick", "busbw", "GB/s", 10);
  failed["status"] = "failed";
  Json no_value = record("quick", "busbw", "GB/s", 10);
  no_value["value"] = nullptr;
  m.record_ingested(failed);
  m.record_ingested(no_value);
  const std::string text = m.text();
  EXPECT_FALSE(sample(text, kBusbw)) << text;
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_records_ingested_total"), 2);
}

TEST(Metrics, ResubmittingAnExperimentRemovesItsOldSeries) {
  Metrics m;
  m.experiment_submitted("quick");
  m.record_ingested(record("quick", "busbw", "GB/s", 10, 1024));
  m.record_ingested(record("quick", "busbw", "GB/s", 11, 2048));
  m.record_ingested(record("quick", "time", "us", 5, 1024));
  m.record_ingested(record("other", "busbw", "GB/s", 30, 1024));

  m.experiment_submitted("quick");
  std::string text = m.text();
  EXPECT_FALSE(sample(text, kBusbw, {"experiment=\"quick\""})) << text;
  EXPECT_FALSE(sample(text, "scalebench_collective_time_seconds", {"experiment=\"quick\""})) << text;
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"experiment=\"other\""}), 30e9) << "other experiments keep theirs";

  m.record_ingested(record("quick", "busbw", "GB/s", 12, 1024));
  text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"experiment=\"quick\"", "size=\"1024\""}), 12e9);
  EXPECT_FALSE(sample(text, kBusbw, {"experiment=\"quick\"", "size=\"2048\""})) << "the old point is gone";
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiments_submitted_total"), 2);
}

// The coordinator passes only the fields validation reads (RawRecord::fields) and the whole record
// on demand: a new series takes its labels (params, point, placement) from the whole record.
TEST(Metrics, NewSeriesTakeTheirLabelsFromTheWholeRecord) {
  Metrics m;
  const Json whole = record("quick", "busbw", "GB/s", 10, 1024);
  Json fields = whole;
  fields["params"] = Json::object();
  fields["point"] = Json::object();
  fields["placement"] = Json::object();
  int asked = 0;
  auto get_whole = [&] {
    ++asked;
    return whole;
  };
  m.record_ingested(fields, "quick-busbw-1024", get_whole);
  Json again = fields;
  again["value"] = 11;
  m.record_ingested(again, "quick-busbw-1024", get_whole);
  const std::string text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"1024\"", "op=\"all_reduce\"", "nodes=\"1\""}), 11e9);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_gpus", {"experiment=\"quick\""}), 2);
  EXPECT_EQ(asked, 1) << "a series met again is found by its text, without the whole record";
}

// The coordinator passes each record's series text (RawRecord::series_text): a series met again
// is found by it, and a resubmission forgets the texts with the series.
TEST(Metrics, SeriesFoundByTheirTextTakeNewValues) {
  Metrics m;
  m.record_ingested(record("quick", "busbw", "GB/s", 10, 1024), "quick-busbw-1024");
  m.record_ingested(record("quick", "busbw", "GB/s", 20, 2048), "quick-busbw-2048");
  m.record_ingested(record("quick", "busbw", "GB/s", 11, 1024), "quick-busbw-1024");
  std::string text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"1024\""}), 11e9);
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"2048\""}), 20e9);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_gpus", {"experiment=\"quick\""}), 2);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_records_ingested_total"), 3);
  Json failed = record("quick", "busbw", "GB/s", 99, 1024);
  failed["status"] = "failed";
  m.record_ingested(failed, "quick-busbw-1024");
  EXPECT_DOUBLE_EQ(*sample(m.text(), kBusbw, {"size=\"1024\""}), 11e9) << "a failed record sets nothing";

  m.experiment_submitted("quick");
  EXPECT_FALSE(sample(m.text(), kBusbw, {"experiment=\"quick\""}));
  m.record_ingested(record("quick", "busbw", "GB/s", 12, 1024), "quick-busbw-1024");
  text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"size=\"1024\""}), 12e9) << "made again, not a forgotten gauge";
  EXPECT_FALSE(sample(text, kBusbw, {"size=\"2048\""}));
}

TEST(Metrics, AtMostKMaxExperimentsKeepSeries) {
  Metrics m;
  const int n = static_cast<int>(Metrics::kMaxExperiments) + 3;
  for (int i = 0; i < n; ++i) {
    m.experiment_submitted("exp-" + std::to_string(i));
    m.record_ingested(record("exp-" + std::to_string(i), "busbw", "GB/s", i + 1));
    m.record_ingested(record("exp-" + std::to_string(i), "time", "us", i + 1));
  }
  const std::string text = m.text();
  auto names = label_values(text, kBusbw, "experiment");
  EXPECT_EQ(names.size(), Metrics::kMaxExperiments);
  EXPECT_EQ(label_values(text, "scalebench_collective_time_seconds", "experiment").size(), Metrics::kMaxExperiments);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(names.count("exp-" + std::to_string(i))) << "the oldest are dropped: " << i;
  for (int i = 3; i < n; ++i) EXPECT_TRUE(names.count("exp-" + std::to_string(i))) << i;
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, {"experiment=\"exp-" + std::to_string(n - 1) + "\""}), n * 1e9);
}

TEST(Metrics, ServiceGaugesAndCounters) {
  Metrics m;
  std::string text = m.text();
  for (const char* s : {"ok", "failed", "timeout", "skipped", "cancelled"})
    EXPECT_DOUBLE_EQ(*sample(text, "scalebench_runs_finished_total", {std::string("status=\"") + s + "\""}), 0) << s;

  m.set_agents(3, 1);
  m.set_runs(5, 2);
  m.run_finished("ok");
  m.run_finished("ok");
  m.run_finished("timeout");
  text = m.text();
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_agents", {"state=\"alive\""}), 3);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_agents", {"state=\"lost\""}), 1);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_runs", {"state=\"queued\""}), 5);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_runs", {"state=\"running\""}), 2);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_runs_finished_total", {"status=\"ok\""}), 2);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_runs_finished_total", {"status=\"timeout\""}), 1);

  m.set_agents(0, 4);
  EXPECT_DOUBLE_EQ(*sample(m.text(), "scalebench_agents", {"state=\"alive\""}), 0);
}

TEST(Metrics, PlacementCountsAreValuesForTheRecordingRules) {
  Metrics m;
  m.record_ingested(record("quick", "busbw", "GB/s", 12.5));
  Json host = record("quick", "busbw", "GB/s", 1);
  host["placement"] = {{"nodes", 1}, {"ranks", 4}, {"gpus", 0}};
  m.record_ingested(host);
  std::string text = m.text();
  const std::vector<std::string> gpu_point{"experiment=\"quick\"", "nodes=\"1\"", "gpus=\"2\"", "ranks=\"2\"",
                                           "device=\"gpu\""};
  const std::vector<std::string> host_point{"experiment=\"quick\"", "nodes=\"1\"", "gpus=\"0\"", "ranks=\"4\"",
                                            "device=\"host\""};
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_gpus", gpu_point), 2);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_ranks", gpu_point), 2);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_gpus", host_point), 0);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_placement_ranks", host_point), 4);
  // A host run's results say so in their device label, not only by gpus="0".
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, host_point), 1e9);
  EXPECT_DOUBLE_EQ(*sample(text, kBusbw, gpu_point), 12.5e9);
  // Only the placement labels: one series per placement, however many points it measured.
  EXPECT_EQ(text.find("scalebench_placement_gpus{backend"), std::string::npos);
  m.record_ingested(record("quick", "busbw", "GB/s", 13, 2048));
  EXPECT_EQ(label_values(m.text(), "scalebench_placement_gpus", "gpus"), (std::set<std::string>{"0", "2"}));

  m.experiment_submitted("quick");  // a resubmission drops them with the results
  text = m.text();
  EXPECT_FALSE(sample(text, "scalebench_placement_gpus", {"experiment=\"quick\""})) << text;
  EXPECT_FALSE(sample(text, "scalebench_placement_ranks", {"experiment=\"quick\""})) << text;
}

TEST(MetricsProgress, RemainingIsElapsedPerDoneRunTimesRunsLeft) {
  EXPECT_DOUBLE_EQ(*Metrics::remaining_seconds(10, 4, 20.0), 30.0);
  EXPECT_DOUBLE_EQ(*Metrics::remaining_seconds(10, 10, 20.0), 0.0);
  EXPECT_DOUBLE_EQ(*Metrics::remaining_seconds(0, 0, 0.0), 0.0);
  EXPECT_FALSE(Metrics::remaining_seconds(10, 0, 20.0)) << "no run done: no estimate";
}

TEST(MetricsProgress, RunsByStateProgressElapsedAndRemaining) {
  Metrics m;
  m.set_progress(
      {{"study", {{"queued", 3}, {"running", 1}, {"ok", 5}, {"failed", 1}}, 60.0}, {"waiting", {{"queued", 4}}, 2.0}});
  const std::string text = m.text();
  const std::string study = "experiment=\"study\"";
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_runs", {study, "state=\"queued\""}), 3);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_runs", {study, "state=\"running\""}), 1);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_runs", {study, "state=\"ok\""}), 5);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_runs", {study, "state=\"failed\""}), 1);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_runs", {study, "state=\"timeout\""}), 0)
      << "every state has a series, so sums and ratios need no absent-series handling";
  EXPECT_EQ(label_values(text, "scalebench_experiment_runs", "state").size(), Metrics::run_states().size());
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_progress_ratio", {study}), 0.6);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_elapsed_seconds", {study}), 60);
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_remaining_seconds", {study}), 40);  // 60 / 6 x 4

  const std::string waiting = "experiment=\"waiting\"";
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_progress_ratio", {waiting}), 0);
  EXPECT_FALSE(sample(text, "scalebench_experiment_remaining_seconds", {waiting})) << "no estimate before a run ends";
}

TEST(MetricsProgress, EachUpdateReplacesTheExperimentsShown) {
  Metrics m;
  m.set_progress({{"old", {{"ok", 2}}, 5.0}});
  m.set_progress({{"new", {{"queued", 1}, {"ok", 1}}, 5.0}});
  const std::string text = m.text();
  EXPECT_EQ(label_values(text, "scalebench_experiment_runs", "experiment"), (std::set<std::string>{"new"})) << text;
  EXPECT_FALSE(sample(text, "scalebench_experiment_elapsed_seconds", {"experiment=\"old\""}));
  EXPECT_DOUBLE_EQ(*sample(text, "scalebench_experiment_remaining_seconds", {"experiment=\"new\""}), 5);
}

}  // namespace
}  // namespace scalebench
