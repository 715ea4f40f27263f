// The battery per level: what each level runs on a GPU node, and that the items of one node,
// one after another as the scheduler runs them, fit the level's stated time bound.
#include "accept/battery.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace scalebench::accept {
namespace {

std::vector<Item> on_two_gpu_nodes(const std::string& level) {
  std::vector<std::string> left_out;
  return battery(level_named(level), {{"node-a", 8}, {"node-b", 8}}, "accept-1", &left_out);
}

// Seconds each node's items are expected to take, one after another.
std::map<std::string, double> per_node_seconds(const std::vector<Item>& items) {
  std::map<std::string, double> s;
  for (const Item& it : items)
    for (const std::string& a : it.agents) s[a] += it.expected_s;
  return s;
}

std::set<std::string> labels(const std::vector<Item>& items) {
  std::set<std::string> out;
  for (const Item& it : items) out.insert(it.label);
  return out;
}

TEST(Battery, EachLevelFitsItsBoundPerNode) {
  for (const char* level : {"quick", "standard", "long"}) {
    const Level l = level_named(level);
    const auto seconds = per_node_seconds(on_two_gpu_nodes(level));
    ASSERT_EQ(seconds.size(), 2u) << level;
    for (const auto& [node, s] : seconds) EXPECT_LE(s, l.bound_s) << level << " " << node;
  }
  EXPECT_EQ(level_named("long").bound_s, 20 * 60);
}

TEST(Battery, LongRunsEveryGemmPrecisionAndLongerBurns) {
  const auto items = on_two_gpu_nodes("long");
  const auto have = labels(items);
  for (const char* p : {"bf16", "fp32", "tf32", "fp16", "fp8e4m3", "fp64", "fp8e5m2", "int8"})
    EXPECT_TRUE(have.count(std::string("gemm ") + p)) << p;
  int burns = 0;
  for (const Item& it : items)
    if (it.workload == "burn") {
      ++burns;
      EXPECT_NE(it.yaml.find("duration_s: 300}"), std::string::npos) << it.yaml;
    }
  EXPECT_EQ(burns, 4);  // GEMM and HBM on each node
  // The standard level keeps its five precisions and 30 s burns.
  const auto standard = on_two_gpu_nodes("standard");
  EXPECT_FALSE(labels(standard).count("gemm int8"));
  for (const Item& it : standard) {
    if (it.workload == "burn") {
      EXPECT_NE(it.yaml.find("duration_s: 30}"), std::string::npos) << it.yaml;
    }
  }
}

// Silent data corruption is looked for in a GEMM at every level, and from standard on also in a
// few training steps.
TEST(Battery, TheTrainingChecksumRunsFromTheStandardLevel) {
  auto trains = [](const std::vector<Item>& items) {
    int n = 0;
    for (const Item& it : items) n += it.label == "checksum train" && it.yaml.find("kind: train") != std::string::npos;
    return n;
  };
  EXPECT_EQ(trains(on_two_gpu_nodes("quick")), 0);
  EXPECT_EQ(trains(on_two_gpu_nodes("standard")), 2);
  EXPECT_EQ(trains(on_two_gpu_nodes("long")), 2);
}

TEST(Battery, ANodeWithoutGpusRunsTheConfigurationCheckOnly) {
  std::vector<std::string> left_out;
  const auto items = battery(level_named("long"), {{"cpu-node", 0}}, "accept-1", &left_out);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].workload, "nodecheck");
}

}  // namespace
}  // namespace scalebench::accept
