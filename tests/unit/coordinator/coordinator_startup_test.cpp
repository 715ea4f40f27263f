// Start-up on a stored history: the coordinator answers at once, counts the stored records in
// scalebench_records_ingested_total, and rebuilds the result gauges from them beside the API,
// the newest value of each series winning and a record posted since the start never overwritten
// by an older one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"

namespace scalebench {
namespace {

Json busbw(const std::string& experiment, long long run_id, double value) {
  return Json{{"schema_version", 1},
              {"run_id", run_id},
              {"experiment", experiment},
              {"workload", "collective"},
              {"variant", "pcie"},
              {"params", {{"op", "all_reduce"}, {"dtype", "float32"}, {"backend", "nccl"}, {"in_place", false}}},
              {"placement", {{"nodes", 1}, {"ranks", 2}, {"gpus", 2}}},
              {"point", {{"size", 1024}}},
              {"metric", "busbw"},
              {"unit", "GB/s"},
              {"value", value},
              {"status", "ok"}};
}

// The value of the first sample line of `text` that starts with `prefix` and holds `part`
// (-1 when none).
double value_of(const std::string& text, const std::string& prefix, const std::string& part = "") {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos)
      return std::stod(line.substr(line.rfind(' ') + 1));
  return -1;
}

class CoordinatorStartup : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalebench-startup-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string db() const { return (dir_ / "c.db").string(); }
  std::filesystem::path dir_;
};

TEST_F(CoordinatorStartup, CountsAtOnceAndRebuildsTheGaugesBesideTheApi) {
  const int kRecords = 20000;
  {
    Store s(db());
    const long long e = s.add_experiment("old", "o.yaml", "name: old\n", {RunSpec{}}, 1.0);
    const long long run = s.runs(e).at(0).id;
    Store::Transaction tx(s);
    for (int i = 0; i < kRecords; ++i) s.add_record(run, 1, i, busbw("old", run, 1 + i % 7));
    s.add_record(run, 1, kRecords, busbw("old", run, 42));  // the newest value of the series
    tx.commit();
  }
  const auto start = std::chrono::steady_clock::now();
  Coordinator::Options o;
  o.db_path = db();
  Coordinator c(o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_EQ(value_of(c.metrics_text(), "scalebench_records_ingested_total "), kRecords + 1)
      << "counted before the first answer";
  const std::string series = "scalebench_collective_busbw_bytes_per_second{";
  std::string text;
  for (int i = 0; i < 200 && value_of(text, series) != 42e9; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = c.metrics_text();
  }
  EXPECT_EQ(value_of(text, series), 42e9) << "the newest stored value, replayed oldest first:\n" << text;
  EXPECT_EQ(value_of(text, "scalebench_records_ingested_total "), kRecords + 1) << "replays are not counted again";
}

// A stored record with a malformed field (stored before ingest checked it) makes no gauge, and the
// records stored after it still rebuild theirs.
TEST_F(CoordinatorStartup, AMalformedStoredRecordDoesNotStopTheRebuild) {
  {
    Store s(db());
    const long long e = s.add_experiment("old", "o.yaml", "name: old\n", {RunSpec{}}, 1.0);
    const long long run = s.runs(e).at(0).id;
    Json bad = busbw("old", run, 5);
    bad["placement"]["hosts"] = "not-a-list";
    Store::Transaction tx(s);
    s.add_record(run, 1, 0, bad);
    s.add_record(run, 1, 1, busbw("old", run, 42));
    tx.commit();
  }
  Coordinator::Options o;
  o.db_path = db();
  Coordinator c(o);
  const std::string series = "scalebench_collective_busbw_bytes_per_second{";
  std::string text;
  for (int i = 0; i < 100 && value_of(text, series) != 42e9; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = c.metrics_text();
  }
  EXPECT_EQ(value_of(text, series), 42e9) << text;
}

// A record posted while the history is replayed is newer than every replayed one: it keeps its
// gauge; a name submitted again meanwhile is not replayed; end_replay ends that protection.
TEST(MetricsReplay, APostedRecordWinsOverTheReplayedHistory) {
  Metrics m;
  m.begin_replay(3, {"old", "again"});
  m.record_ingested(busbw("old", 1, 5));
  m.replay_record(busbw("old", 1, 1));
  m.experiment_submitted("again");
  m.replay_record(busbw("again", 2, 9));
  std::string text = m.text();
  EXPECT_EQ(value_of(text, "scalebench_collective_busbw_bytes_per_second{", "experiment=\"old\""), 5e9) << text;
  EXPECT_EQ(value_of(text, "scalebench_collective_busbw_bytes_per_second{", "experiment=\"again\""), -1) << text;
  EXPECT_EQ(value_of(text, "scalebench_records_ingested_total "), 4);
  m.end_replay();
  m.record_ingested(busbw("old", 1, 6));
  EXPECT_EQ(value_of(m.text(), "scalebench_collective_busbw_bytes_per_second{", "experiment=\"old\""), 6e9);
}

}  // namespace
}  // namespace scalebench
