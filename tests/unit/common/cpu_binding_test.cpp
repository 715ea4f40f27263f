// Rank binding: CPU lists, NUMA nodes from sysfs, the binding the agent chooses for a GPU run
// under mpirun, srun and the local launcher, and the binding a rank reads back from the kernel.
#include "common/cpu_binding.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/launcher.hpp"
#include "common/error.hpp"
#include "common/rank_binding.hpp"

namespace scalebench {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// A sysfs with two NUMA nodes of four CPUs each (and an unrelated entry).
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("cpu-binding-test-" + std::to_string(getpid()));
    fs::create_directories(root / "devices/system/node/node0");
    fs::create_directories(root / "devices/system/node/node1");
    fs::create_directories(root / "devices/system/node/power");
    std::ofstream(root / "devices/system/node/node0/cpulist") << "0-3\n";
    std::ofstream(root / "devices/system/node/node1/cpulist") << "4-7\n";
  }
  void TearDown() override { fs::remove_all(root); }
  LaunchConfig config() const {
    LaunchConfig c;
    c.run_program = "scalebench-run";
    c.gpu_numa = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};
    c.sysfs_root = root.string();
    return c;
  }
  fs::path root;
};

Json spec(int ranks_per_node) { return Json{{"nodes", 1}, {"ranks_per_node", ranks_per_node}}; }

}  // namespace

TEST(CpuList, ParsesAndWritesLinuxLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(cpu_list_text({8, 3, 0, 1, 2, 11, 10}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list_text({5}), "5");
  EXPECT_EQ(parse_cpu_list("5 \n"), (std::vector<int>{5}));  // sysfs's local_cpulist, as the copy workload reads it
  for (const char* bad : {"a", "3-1", "1,,2", "1,", "-4", "0-", "99999"})
    EXPECT_THROW(parse_cpu_list(bad), Error) << bad;
}

TEST_F(FakeSysfs, NumaNodesOfCpus) {
  EXPECT_EQ(numa_node_cpus(1, root.string()), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(numa_node_cpus(2, root.string()).empty());
  EXPECT_EQ(numa_nodes_of({1, 2}, root.string()), std::vector<int>{0});
  EXPECT_EQ(numa_nodes_of({3, 4}, root.string()), (std::vector<int>{0, 1}));
}

TEST(RankBinding, EachRankTakesItsGpusNumaNode) {
  const std::map<int, int> numa{{0, 0}, {1, 0}, {2, 1}, {3, 1}};
  EXPECT_EQ(rank_numa_nodes(2, {1, 2}, numa), (std::vector<int>{0, 1}));
  EXPECT_EQ(rank_numa_nodes(4, {0, 1, 2, 3}, numa), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(rank_numa_nodes(1, {0, 1}, numa), std::vector<int>{0});  // one rank, GPUs of one node
  EXPECT_TRUE(rank_numa_nodes(1, {1, 2}, numa).empty());             // one rank across two nodes
  EXPECT_TRUE(rank_numa_nodes(2, {}, numa).empty());                 // host run
  EXPECT_TRUE(rank_numa_nodes(1, {0}, {{0, -1}}).empty());           // NUMA node unknown
}

TEST_F(FakeSysfs, MpirunRanksGetTheirGpusCpus) {
  LaunchPlan p = plan_launch(config(), spec(2), "s.json", {1, 2});
  EXPECT_EQ(p.env.at(kCpuBindingVariable), "0-3;4-7");
  // Forwarded to the ranks, and mpirun binds nothing on top.
  EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), std::string(kCpuBindingVariable)), p.argv.end());
  EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), "--bind-to"), p.argv.end());
  LaunchConfig off = config();
  off.bind_ranks = false;
  EXPECT_FALSE(plan_launch(off, spec(2), "s.json", {1, 2}).env.count(kCpuBindingVariable));
  EXPECT_FALSE(plan_launch(config(), spec(2), "s.json", {}).env.count(kCpuBindingVariable));  // host run
}

TEST_F(FakeSysfs, LocalLaunchBindsItsOneRank) {
  LaunchConfig c = config();
  c.launcher = Launcher::local;
  EXPECT_EQ(plan_launch(c, spec(1), "s.json", {3}).env.at(kCpuBindingVariable), "4-7");
}

TEST_F(FakeSysfs, SrunBindsTasksToTheirGpusNumaNode) {
  LaunchConfig c = config();
  c.launcher = Launcher::srun;
  c.slurm_node = "n1";
  LaunchPlan p = plan_launch(c, spec(2), "s.json", {0, 3});
  EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), "--cpu-bind=map_ldom:0,1"), p.argv.end());
  EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), "--mem-bind=map_ldom:0,1"), p.argv.end());
  EXPECT_EQ(std::find(p.argv.begin(), p.argv.end(), "--cpu-bind=none"), p.argv.end());
  // A host run's tasks are not pinned.
  LaunchPlan host = plan_launch(c, spec(2), "s.json", {});
  EXPECT_NE(std::find(host.argv.begin(), host.argv.end(), "--cpu-bind=none"), host.argv.end());
}

TEST(CpuBinding, AppliedBindingIsWhatTheKernelReportsBack) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int first = -1, second = -1;
  for (int c = 0; c < CPU_SETSIZE && second < 0; ++c)
    if (CPU_ISSET(c, &before)) (first < 0 ? first : second) = c;
  ASSERT_GE(first, 0);
  const std::string mine = std::to_string(first);
  // Local rank 1's entry, not rank 0's.
  apply_cpu_binding("9999999;" + mine, 1);
  const Json back = cpu_binding_read_back();
  EXPECT_EQ(back["cpus"], mine);
  EXPECT_TRUE(back["numa_nodes"].is_array());
  sched_setaffinity(0, sizeof before, &before);
  if (second >= 0) {
    // CPUs outside what the process may use are left out: bound to `second` only.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CPU_SET(second, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    apply_cpu_binding(std::to_string(second) + "," + std::to_string(CPU_SETSIZE - 1), 0);
    EXPECT_EQ(cpu_binding_read_back()["cpus"], std::to_string(second));
    // None of them allowed: left as it was.
    apply_cpu_binding(std::to_string(CPU_SETSIZE - 1), 0);
    EXPECT_EQ(cpu_binding_read_back()["cpus"], std::to_string(second));
    sched_setaffinity(0, sizeof before, &before);
  }
  EXPECT_THROW(apply_cpu_binding(mine, 1), Error);  // no entry for local rank 1
  EXPECT_THROW(apply_cpu_binding("x;y", 0), Error);
  apply_cpu_binding(";", 0);  // an empty entry binds nothing
  EXPECT_NE(cpu_binding_read_back()["cpus"], "");
}

}  // namespace scalebench
