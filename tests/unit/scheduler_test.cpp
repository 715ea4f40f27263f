#include "coordinator/scheduler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/spec.hpp"

namespace scalebench {
namespace {

// An agent with `gpus` GPUs and `slots` host slots; `nccl` adds the NCCL backend.
Store::Agent agent(const std::string& id, int gpus, bool nccl, int slots = 8, const std::string& state = "alive") {
  Json gpu_list = Json::array();
  for (int i = 0; i < gpus; ++i) gpu_list.push_back(Json{{"index", i}, {"name", "H100"}});
  Json caps = nccl ? Json{"mpi", "nccl"} : Json{"mpi"};
  return Store::Agent{id, id, Json{{"gpus", gpu_list}, {"slots", slots}, {"capabilities", caps}}, state, 0, 0};
}

Store::Run run(long long id, bool gpu, int ranks_per_node, int nodes = 1) {
  Store::Run r;
  r.id = id;
  r.state = "queued";
  r.spec = Json{{"gpu", gpu}, {"ranks_per_node", ranks_per_node}, {"nodes", nodes}};
  return r;
}

TEST(ClusterShape, NoAgentsIsAnEmptyHostShape) {
  ClusterShape s = cluster_shape({});
  EXPECT_FALSE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 0);
  EXPECT_EQ(s.ranks_per_node, 0);
}

TEST(ClusterShape, HostOnlyAgentsOfferTheirLargestSlotCount) {
  ClusterShape s = cluster_shape({agent("a", 0, false, 4), agent("b", 0, false, 16)});
  EXPECT_FALSE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 0);
  EXPECT_EQ(s.ranks_per_node, 16);
}

TEST(ClusterShape, GpuCountIsTheSmallestOfTheGpuAgents) {
  ClusterShape s = cluster_shape({agent("a", 8, true), agent("b", 4, true), agent("c", 8, true)});
  EXPECT_TRUE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 4) << "'all' must fit on every GPU agent";
}

TEST(ClusterShape, HostOnlyAgentsDoNotLowerTheGpuCount) {
  ClusterShape s = cluster_shape({agent("host", 0, false, 32), agent("gpu", 4, true, 8)});
  EXPECT_TRUE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.ranks_per_node, 32);
}

TEST(ClusterShape, GpusWithoutNcclDoNotCount) {
  ClusterShape s = cluster_shape({agent("a", 8, false)});
  EXPECT_FALSE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 0);
}

TEST(ClusterShape, OnlyAliveAgentsCount) {
  ClusterShape s = cluster_shape(
      {agent("lost", 2, true, 64, "lost"), agent("gone", 1, true, 64, "gone"), agent("alive", 8, true, 4)});
  EXPECT_TRUE(s.gpu);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.ranks_per_node, 4);
  EXPECT_FALSE(cluster_shape({agent("lost", 8, true, 8, "lost")}).gpu);
}

TEST(ClusterShape, MissingSlotsCountAsOne) {
  Store::Agent a{"a", "a", Json::object(), "alive", 0, 0};
  ClusterShape s = cluster_shape({a});
  EXPECT_FALSE(s.gpu);
  EXPECT_EQ(s.ranks_per_node, 1);
}

TEST(Fits, GpuRunsNeedEnoughGpusAndNccl) {
  EXPECT_TRUE(fits(run(1, true, 4), agent("a", 4, true)));
  EXPECT_TRUE(fits(run(1, true, 2), agent("a", 8, true)));
  EXPECT_FALSE(fits(run(1, true, 8), agent("a", 4, true)));
  EXPECT_FALSE(fits(run(1, true, 1), agent("a", 4, false)));
  EXPECT_FALSE(fits(run(1, true, 1), agent("a", 0, false)));
}

TEST(Fits, HostRunsFitAnyAliveAgent) {
  EXPECT_TRUE(fits(run(1, false, 2), agent("a", 0, false, 1)));
  EXPECT_TRUE(fits(run(1, false, 2), agent("a", 8, true)));
}

TEST(Fits, NeverOnAnAgentThatIsNotAlive) {
  EXPECT_FALSE(fits(run(1, false, 1), agent("a", 8, true, 8, "lost")));
  EXPECT_FALSE(fits(run(1, true, 1), agent("a", 8, true, 8, "gone")));
}

TEST(Fits, MultiNodeRunsDoNotFitOneAgent) {
  EXPECT_FALSE(fits(run(1, false, 1, 2), agent("a", 8, true)));
  EXPECT_FALSE(fits(run(1, true, 1, 2), agent("a", 8, true)));
}

TEST(PickRun, TakesTheOldestRunThatFits) {
  std::vector<Store::Run> queued{run(10, true, 8), run(11, true, 2), run(12, false, 1), run(13, true, 1)};
  auto four_gpus = pick_run(queued, agent("a", 4, true));
  ASSERT_TRUE(four_gpus);
  EXPECT_EQ(four_gpus->id, 11) << "run 10 needs 8 GPUs and is passed over";
  auto eight_gpus = pick_run(queued, agent("b", 8, true));
  ASSERT_TRUE(eight_gpus);
  EXPECT_EQ(eight_gpus->id, 10);
  auto host = pick_run(queued, agent("c", 0, false));
  ASSERT_TRUE(host);
  EXPECT_EQ(host->id, 12);
}

TEST(PickRun, NothingFits) {
  EXPECT_FALSE(pick_run({}, agent("a", 8, true)));
  EXPECT_FALSE(pick_run({run(1, true, 8)}, agent("a", 4, true)));
  EXPECT_FALSE(pick_run({run(1, false, 1)}, agent("a", 4, true, 8, "lost")));
}

// Expanding on the shape of a mixed cluster: "all" must fit every GPU agent, but a placement is
// oversize only when no agent can take it.
TEST(ClusterShape, APlacementThatTheLargestAgentFitsIsNotOversize) {
  const std::vector<Store::Agent> agents{agent("big", 8, true), agent("small", 4, true)};
  Experiment ex = parse_experiment("name: x\nworkload: collective\nplacement: {gpus_per_node: [8]}\n", "x.yaml");
  auto runs = expand(ex, cluster_shape(agents));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].fail_reason, "");
  EXPECT_EQ(runs[0].skip_reason, "");
  Store::Run r;
  r.spec = to_json(runs[0]);
  EXPECT_TRUE(fits(r, agents[0]));
}

}  // namespace
}  // namespace scalebench
