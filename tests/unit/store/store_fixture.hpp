#pragma once
// The store tests' fixture: a fresh directory per test for the SQLite file and its WAL companions,
// and the experiments and agents they store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "coordinator/scheduler.hpp"
#include "store/store.hpp"

namespace scalebench {

namespace fs = std::filesystem;

// A fresh directory per test for the SQLite file and its WAL companions.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("scalebench-store-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "scalebench.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static RunSpec run_spec(int index, const std::string& op) {
    RunSpec r;
    r.index = index;
    r.experiment = "quick";
    r.workload = "collective";
    r.params = Json{{"op", op}, {"min_bytes", 1024}};
    r.variant = "default";
    r.env = {{"NCCL_P2P_DISABLE", "1"}};
    r.ranks_per_node = 2;
    return r;
  }

  // Three runs: queued, skipped, failed.
  static std::vector<RunSpec> three_runs() {
    std::vector<RunSpec> runs{run_spec(0, "all_reduce"), run_spec(1, "all_gather"), run_spec(2, "alltoall")};
    runs[1].skip_reason = "backend nccl needs GPUs";
    runs[2].fail_reason = "needs 8 GPUs per node";
    return runs;
  }

  static Store::Agent agent(const std::string& id, const std::string& state, double seen) {
    return Store::Agent{id, id + ".example", Json{{"gpus", Json::array()}, {"slots", 4}}, state, 100.0, seen};
  }

  fs::path dir_;
  std::string path_;
};

}  // namespace scalebench
