// The coordinator's progress series: from the store's runs, through submission, assignment and
// the end of runs, to a finished experiment whose elapsed time stops; after a restart too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"

namespace scalebench {
namespace {

// The value of the one sample of `name` whose label part contains `labels`; nullopt when none.
std::optional<double> sample(const std::string& text, const std::string& name, const std::string& labels) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + "{", 0) == 0 && line.find(labels) != std::string::npos)
      return std::stod(line.substr(line.rfind(' ') + 1));
  return std::nullopt;
}

class CoordinatorProgress : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalebench-progress-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Coordinator::Options options() const {
    Coordinator::Options o;
    o.db_path = (dir_ / "c.db").string();
    return o;
  }
  static void register_host_agent(Coordinator& c) {
    ApiResult r = c.register_agent(Json{{"name", "node-a"},
                                        {"gpus", Json::array()},
                                        {"slots", 2},
                                        {"capabilities", {"mpi"}},
                                        {"workloads", {"collective"}}});
    ASSERT_EQ(r.status, 200) << r.body.dump();
  }
  // Takes the next queued run for node-a and ends it as `status`.
  static void run_one(Coordinator& c, const std::string& status) {
    ApiResult hb = c.heartbeat("node-a", Json{{"active", Json::array()}});
    ASSERT_EQ(hb.status, 200) << hb.body.dump();
    ASSERT_EQ(hb.body["runs"].size(), 1u) << hb.body.dump();
    const Json& run = hb.body["runs"][0];
    ApiResult end = c.finish_run(run["run_id"].get<long long>(), Json{{"attempt", run["attempt"]}, {"status", status}});
    ASSERT_EQ(end.status, 200) << end.body.dump();
  }
  std::filesystem::path dir_;
};

const char* kFourRuns = R"(name: progress-study
workload: collective
params: {op: all_reduce, min_bytes: 1KiB, max_bytes: 4KiB}
placement: {ranks_per_node: [1, 2]}
variants:
  a: {}
  b: {}
)";

const std::string kExperiment = "experiment=\"progress-study\"";

TEST_F(CoordinatorProgress, FollowsTheRunsOfAnExperimentToItsEnd) {
  Coordinator c(options());
  register_host_agent(c);
  ApiResult sub = c.submit(kFourRuns, "progress.yaml");
  ASSERT_EQ(sub.status, 201) << sub.body.dump();
  ASSERT_EQ(sub.body["runs"], 4);

  std::string text = c.metrics_text();
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"queued\""), 4) << text;
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"ok\""), 0);
  EXPECT_EQ(sample(text, "scalebench_experiment_progress_ratio", kExperiment), 0);
  EXPECT_FALSE(sample(text, "scalebench_experiment_remaining_seconds", kExperiment)) << "nothing done yet";
  ASSERT_TRUE(sample(text, "scalebench_experiment_elapsed_seconds", kExperiment));

  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  run_one(c, "ok");
  run_one(c, "failed");
  text = c.metrics_text();
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"queued\""), 2) << text;
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"ok\""), 1);
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"failed\""), 1);
  EXPECT_EQ(sample(text, "scalebench_experiment_progress_ratio", kExperiment), 0.5);
  const double elapsed = *sample(text, "scalebench_experiment_elapsed_seconds", kExperiment);
  EXPECT_GE(elapsed, 0.05);
  // Two done, two left: as long again as it took so far.
  EXPECT_NEAR(*sample(text, "scalebench_experiment_remaining_seconds", kExperiment), elapsed, 0.05);

  run_one(c, "ok");
  run_one(c, "ok");
  text = c.metrics_text();
  EXPECT_EQ(sample(text, "scalebench_experiment_progress_ratio", kExperiment), 1);
  EXPECT_EQ(sample(text, "scalebench_experiment_remaining_seconds", kExperiment), 0);
  const double final_elapsed = *sample(text, "scalebench_experiment_elapsed_seconds", kExperiment);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(sample(c.metrics_text(), "scalebench_experiment_elapsed_seconds", kExperiment), final_elapsed)
      << "a finished experiment's elapsed time stops at its last run's end";
}

TEST_F(CoordinatorProgress, NewestExperimentNamesOnlyAndBackAfterARestart) {
  const int n = static_cast<int>(Metrics::kMaxExperiments) + 2;
  {
    Coordinator c(options());
    register_host_agent(c);
    for (int i = 0; i < n; ++i) {
      std::string yaml = kFourRuns;
      yaml.replace(yaml.find("progress-study"), 14, "study-" + std::to_string(i));
      ASSERT_EQ(c.submit(yaml, "s.yaml").status, 201);
    }
    // Resubmitting a name shows its newest submission once.
    ASSERT_EQ(c.submit(kFourRuns, "a.yaml").status, 201);
    ASSERT_EQ(c.submit(kFourRuns, "b.yaml").status, 201);
    const std::string text = c.metrics_text();
    EXPECT_FALSE(sample(text, "scalebench_experiment_progress_ratio", "experiment=\"study-0\"")) << text;
    EXPECT_FALSE(sample(text, "scalebench_experiment_progress_ratio", "experiment=\"study-2\""));
    EXPECT_TRUE(sample(text, "scalebench_experiment_progress_ratio", "experiment=\"study-3\""));
    EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"queued\""), 4);
  }
  Coordinator restarted(options());
  const std::string text = restarted.metrics_text();
  EXPECT_FALSE(sample(text, "scalebench_experiment_progress_ratio", "experiment=\"study-2\"")) << text;
  EXPECT_TRUE(
      sample(text, "scalebench_experiment_progress_ratio", "experiment=\"study-" + std::to_string(n - 1) + "\""));
  EXPECT_EQ(sample(text, "scalebench_experiment_runs", kExperiment + ",state=\"queued\""), 4);
}

}  // namespace
}  // namespace scalebench
