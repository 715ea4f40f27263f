// The train workload's time-to-accuracy mode on a GPU, on Fashion-MNIST from its Debian package;
// skipped where no GPU is visible or the package is not installed.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <filesystem>

#include "tests/unit/gpu_available.hpp"
#include "workloads/dataset/idx_file.hpp"
#include "workloads/mllog/mllog.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/tta_bench.hpp"

using namespace scalebench;

namespace {
using scalebench::test_support::have_gpu;

// One MPI session for the process (MPI starts once): a single rank.
const MpiSession& session() {
  static MpiSession mpi(nullptr, nullptr);
  return mpi;
}
}  // namespace

// Two epochs of the recipe reach 80% test accuracy; a target out of reach ends aborted after
// max_epochs; both log MLPerf's events.
TEST(TtaGpu, TwoEpochsReachEightyPercentAndAnUnreachableTargetAborts) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (!std::filesystem::exists(std::string(dataset::kFashionMnistDir)))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const dataset::Splits data = dataset::read_mnist_folder(std::string(dataset::kFashionMnistDir));
  train::TtaConfig cfg;
  cfg.data = "fashion-mnist";
  cfg.target_accuracy = 0.80;
  cfg.max_epochs = 2;
  train::TtaRecipe recipe;  // bf16, batch 512
  train::TtaBench bench(session(), cfg, recipe, data);
  const train::SeedResult r = bench.run_seed(1);
  EXPECT_TRUE(r.reached) << train::tta_seed_line(r);
  EXPECT_GT(r.final_accuracy, 0.80);
  EXPECT_LE(r.epochs, 2);
  EXPECT_GT(r.train_s, 0);
  EXPECT_GE(r.total_s, r.train_s);
  const auto runs = mllog::runs(mllog::parse([&] {
    std::string t;
    for (const auto& l : r.mllog) t += l + "\n";
    return t;
  }()));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "success");
  EXPECT_EQ(runs[0].epochs, r.epochs);

  cfg.target_accuracy = 0.999;
  cfg.max_epochs = 1;
  train::TtaBench out_of_reach(session(), cfg, recipe, data);
  const train::SeedResult a = out_of_reach.run_seed(2);
  EXPECT_FALSE(a.reached);
  EXPECT_EQ(a.epochs, 1);
  EXPECT_NE(r.mllog.back().find("\"status\":\"success\""), std::string::npos);
  EXPECT_NE(a.mllog.back().find("\"status\":\"aborted\""), std::string::npos);
}
#endif
