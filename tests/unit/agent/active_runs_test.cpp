// The runs an agent is running: scalebench_run_info to join telemetry on, and dcgm-exporter's
// job-mapping files (a file per GPU index holding the run's id) while they run.
#include "agent/active_runs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "tests/unit/error_text.hpp"

namespace scalebench {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> info_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("scalebench_run_info{", 0) == 0) out.push_back(line);
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ActiveRunsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("active-runs-test-" + std::to_string(getpid()));
    fs::remove_all(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

}  // namespace

TEST(ActiveRuns, RunInfoIsOneSeriesPerGpuWhileTheRunLasts) {
  ActiveRuns runs("host-a", "");
  EXPECT_EQ(runs.metrics_text(), "");
  runs.start({42, "study-1", "collective", {1, 3}, {"GPU-1", "GPU-3"}});
  const std::string text = runs.metrics_text();
  EXPECT_NE(text.find("# TYPE scalebench_run_info gauge"), std::string::npos) << text;
  auto lines = info_lines(text);
  ASSERT_EQ(lines.size(), 2u) << text;
  for (const char* gpu : {"1", "3"}) {
    const std::string want = std::string(
                                 "scalebench_run_info{run_id=\"42\",experiment=\"study-1\",workload=\"collective\","
                                 "Hostname=\"host-a\",gpu=\"") +
                             gpu + "\",UUID=\"GPU-" + gpu + "\",device=\"gpu\"} 1";
    EXPECT_NE(text.find(want), std::string::npos) << want << " in\n" << text;
  }
  runs.end(42);
  EXPECT_EQ(runs.metrics_text(), "");
}

TEST(ActiveRuns, AHostRunIsOneSeriesWithDeviceHost) {
  ActiveRuns runs("host-a", "");
  runs.start({7, "e", "collective", {}, {}});
  auto lines = info_lines(runs.metrics_text());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("device=\"host\""), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("gpu="), std::string::npos) << lines[0];
}

TEST_F(ActiveRunsFiles, MappingFilesNameTheGpuHoldTheRunAndGoWhenItEnds) {
  ActiveRuns runs("host-a", dir.string());
  ASSERT_TRUE(fs::is_directory(dir));  // created when missing
  runs.start({42, "e", "gemm", {0, 2}, {"", ""}});
  runs.start({43, "e", "gemm", {1}, {""}});
  // dcgm-exporter reads every file whose name is a GPU index, one job id per line.
  EXPECT_EQ(read(dir / "0"), "42\n");
  EXPECT_EQ(read(dir / "2"), "42\n");
  EXPECT_EQ(read(dir / "1"), "43\n");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 3);  // no temporary left behind
  runs.end(42);
  EXPECT_FALSE(fs::exists(dir / "0"));
  EXPECT_FALSE(fs::exists(dir / "2"));
  EXPECT_EQ(read(dir / "1"), "43\n");
  // A file someone else wrote over since is theirs: it stays.
  std::ofstream(dir / "1") << "slurm-991\n";
  runs.end(43);
  EXPECT_EQ(read(dir / "1"), "slurm-991\n");
}

TEST_F(ActiveRunsFiles, AFolderThatCannotBeMadeIsAnErrorNamingIt) {
  std::ofstream(dir.string()) << "a file, not a folder\n";
  const std::string e = test_support::error_of([&] { ActiveRuns runs("host-a", (dir / "sub").string()); });
  EXPECT_NE(e.find("--job-mapping-dir " + (dir / "sub").string()), std::string::npos) << e;
}

}  // namespace scalebench
