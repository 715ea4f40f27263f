// The per-rank facts every record's placement and environment are built from (workloads/environment).
#include "workloads/runtime/environment.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

namespace scalebench {
namespace {

Json bound(const std::string& cpus, std::vector<int> numa) { return Json{{"cpus", cpus}, {"numa_nodes", numa}}; }

// As capture_environment exchanges them: each rank's entry as text, parsed by every rank.
std::vector<Json> exchanged(const std::vector<Json>& entries) {
  std::vector<Json> out;
  for (const Json& e : entries) out.push_back(Json::parse(e.dump()));
  return out;
}

TEST(RunEnvironment, RanksMergeIntoDevicesInRankOrderThenListOrder) {
  const DeviceId h0{"NVIDIA H200", "GPU-aaaa", "0000:19:00.0"}, h1{"NVIDIA H200", "GPU-bbbb", "0000:3b:00.0"};
  const DeviceId b0{"NVIDIA H100 80GB HBM3", "GPU-cccc", "0000:19:00.0"};
  const GatheredRanks g = merge_rank_entries(
      exchanged({rank_entry("node-a", 0, bound("0-7", {0}), {h0, h1}),
                 rank_entry("node-b", 0, bound("8-15", {1}), {b0}), rank_entry("node-a", 1, bound("16-23", {1}), {})}));
  EXPECT_EQ(g.hosts, (std::vector<std::string>{"node-a", "node-b"})) << "in order of first appearance";
  EXPECT_EQ(g.gpus, 3);
  EXPECT_EQ(g.models, (std::set<std::string>{"NVIDIA H200", "NVIDIA H100 80GB HBM3"}));
  ASSERT_EQ(g.devices.size(), 4u) << "three GPUs and one entry for the rank without any";
  EXPECT_EQ(g.devices[0], (Json{{"rank", 0},
                                {"host", "node-a"},
                                {"local_rank", 0},
                                {"gpu", "NVIDIA H200"},
                                {"uuid", "GPU-aaaa"},
                                {"pci_bus_id", "0000:19:00.0"}}));
  EXPECT_EQ(g.devices[1]["uuid"], "GPU-bbbb");
  EXPECT_EQ(g.devices[2]["host"], "node-b");
  EXPECT_EQ(g.devices[2]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.devices[3], (Json{{"rank", 2}, {"host", "node-a"}, {"local_rank", 1}}));
  ASSERT_EQ(g.binding.size(), 3u);
  char machine[256] = {};
  gethostname(machine, sizeof machine - 1);
  EXPECT_EQ(g.binding[1],
            (Json{{"rank", 1}, {"host", "node-b"}, {"machine", machine}, {"cpus", "8-15"}, {"numa_nodes", {1}}}))
      << "the placement's name of the node, and the name of the machine the rank ran on";
}

// The old exchange split each rank's line on '|' and ';': a name holding either broke the record.
TEST(RunEnvironment, NamesWithSeparatorsSurviveTheExchange) {
  const DeviceId odd{"GPU | with; separators", "GPU-dddd", "0000:01:00.0"};
  const GatheredRanks g = merge_rank_entries(exchanged({rank_entry("host|x;y", 3, bound("0-3;8-11", {0, 1}), {odd})}));
  ASSERT_EQ(g.devices.size(), 1u);
  EXPECT_EQ(g.devices[0]["gpu"], "GPU | with; separators");
  EXPECT_EQ(g.devices[0]["host"], "host|x;y");
  EXPECT_EQ(g.devices[0]["local_rank"], 3);
  EXPECT_EQ(g.binding[0]["cpus"], "0-3;8-11");
  EXPECT_EQ(g.binding[0]["numa_nodes"], (Json{0, 1}));
}

TEST(RunEnvironment, AnUnboundRankHasEmptyCpusAndNumaNodes) {
  const GatheredRanks g = merge_rank_entries(exchanged({rank_entry("h", 0, Json::object(), {})}));
  EXPECT_EQ(g.gpus, 0);
  EXPECT_EQ(g.binding[0]["cpus"], "");
  EXPECT_EQ(g.binding[0]["numa_nodes"], Json::array());
}

}  // namespace
}  // namespace scalebench
