#include "agent/launcher.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace scalebench {
namespace {

using Args = std::vector<std::string>;

LaunchConfig config() {
  LaunchConfig c;
  c.run_program = "/opt/scalebench/bin/scalebench-run";
  return c;
}

Json spec(int ranks_per_node, Json env = Json::object()) {
  return Json{{"nodes", 1}, {"ranks_per_node", ranks_per_node}, {"env", std::move(env)}};
}

// Position of `arg` in `argv`, or -1.
long index_of(const Args& argv, const std::string& arg) {
  auto it = std::find(argv.begin(), argv.end(), arg);
  return it == argv.end() ? -1 : static_cast<long>(it - argv.begin());
}

TEST(PlanLaunch, HostRunCommandLine) {
  LaunchPlan p = plan_launch(config(), spec(2), "/work/run-5-1.json", {});
  EXPECT_EQ(p.argv, (Args{"mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                          "/opt/scalebench/bin/scalebench-run", "--spec", "/work/run-5-1.json", "--emit", "records"}));
  EXPECT_TRUE(p.env.empty());
}

TEST(PlanLaunch, RankCountIsNodesTimesRanksPerNode) {
  Json s = spec(4);
  s["nodes"] = 2;
  LaunchPlan p = plan_launch(config(), s, "s.json", {});
  ASSERT_GE(p.argv.size(), 3u);
  EXPECT_EQ(p.argv[1], "-np");
  EXPECT_EQ(p.argv[2], "8");
  LaunchPlan defaults = plan_launch(config(), Json::object(), "s.json", {});
  EXPECT_EQ(defaults.argv[2], "1");
}

TEST(PlanLaunch, CustomMpirunAndRoot) {
  LaunchConfig c = config();
  c.mpirun = "/usr/local/openmpi/bin/mpirun";
  c.as_root = true;
  LaunchPlan p = plan_launch(c, spec(1), "s.json", {});
  EXPECT_EQ(p.argv[0], "/usr/local/openmpi/bin/mpirun");
  EXPECT_EQ(p.argv[3], "--allow-run-as-root");
  EXPECT_EQ(index_of(plan_launch(config(), spec(1), "s.json", {}).argv, "--allow-run-as-root"), -1);
}

TEST(PlanLaunch, ExtraArgumentsGoToMpirunInOrder) {
  LaunchConfig c = config();
  c.extra_args = {"--mca", "btl", "^openib"};
  LaunchPlan p = plan_launch(c, spec(2), "s.json", {});
  long mca = index_of(p.argv, "--mca");
  ASSERT_GE(mca, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) + 1], "btl");
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) + 2], "^openib");
  EXPECT_LT(mca, index_of(p.argv, c.run_program)) << "mpirun options come before the program";
}

TEST(PlanLaunch, VariantEnvironmentIsSetAndForwardedToRanks) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"NCCL_P2P_DISABLE", "1"}, {"NCCL_ALGO", "Ring"}}), "s.json", {});
  EXPECT_EQ(p.env, (std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}, {"NCCL_ALGO", "Ring"}}));
  const long program = index_of(p.argv, config().run_program);
  for (const char* var : {"NCCL_P2P_DISABLE", "NCCL_ALGO"}) {
    long at = index_of(p.argv, var);
    ASSERT_GT(at, 0) << var;
    EXPECT_EQ(p.argv[static_cast<std::size_t>(at) - 1], "-x") << var;
    EXPECT_LT(at, program) << var;
  }
}

TEST(PlanLaunch, AssignedGpusAreMadeVisible) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"NCCL_P2P_DISABLE", "1"}}), "s.json", {2, 3});
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  long at = index_of(p.argv, "CUDA_VISIBLE_DEVICES");
  ASSERT_GT(at, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(at) - 1], "-x");
  EXPECT_EQ(p.env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(p.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID") << "GPU ids are the inventory's, in PCI bus order";

  LaunchPlan one = plan_launch(config(), spec(1), "s.json", {7});
  EXPECT_EQ(one.env.at("CUDA_VISIBLE_DEVICES"), "7");
}

TEST(PlanLaunch, AssignedGpusOverrideAVariantsVisibleDevices) {
  LaunchPlan p = plan_launch(config(), spec(1, Json{{"CUDA_VISIBLE_DEVICES", "0"}}), "s.json", {5});
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "5");
  EXPECT_EQ(std::count(p.argv.begin(), p.argv.end(), "CUDA_VISIBLE_DEVICES"), 1);
}

TEST(PlanLaunch, ProgramAndItsArgumentsComeLast) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"A", "b"}}), "/tmp/x y.json", {0, 1});
  ASSERT_GE(p.argv.size(), 5u);
  Args tail(p.argv.end() - 5, p.argv.end());
  EXPECT_EQ(tail, (Args{"/opt/scalebench/bin/scalebench-run", "--spec", "/tmp/x y.json", "--emit", "records"}))
      << "a path with a space stays one argument";
}

}  // namespace
}  // namespace scalebench
