#include "coordinator/scheduler.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "experiment/spec.hpp"

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

Store::Run gpu_run(long long id, int gpus_per_node, int nodes = 1, int priority = 0) {
  Store::Run r = run(id, true, gpus_per_node, nodes);
  r.spec["gpus_per_node"] = gpus_per_node;
  r.spec["priority"] = priority;
  return r;
}

// A run in flight on `hosts`.
Store::Run held(long long id, bool gpu, std::vector<HostPlacement> hosts) {
  Store::Run r = run(id, gpu, 1, static_cast<int>(hosts.size()));
  r.state = "running";
  r.agent_id = hosts.front().agent;
  r.hosts = to_json(hosts);
  return r;
}

TEST(Place, GpuRunsNeedEnoughFreeGpusAndNccl) {
  EXPECT_TRUE(place(gpu_run(1, 4).spec, {agent("a", 4, true)}, {}));
  EXPECT_FALSE(place(gpu_run(1, 8).spec, {agent("a", 4, true)}, {}));
  EXPECT_FALSE(place(gpu_run(1, 1).spec, {agent("a", 4, false)}, {})) << "GPUs without NCCL";
  EXPECT_FALSE(place(gpu_run(1, 1).spec, {agent("a", 8, true, 8, "lost")}, {})) << "only alive agents";
}

TEST(Place, NoTwoRunsShareAGpu) {
  const std::vector<Store::Agent> agents{agent("a", 4, true)};
  Occupancy busy;
  auto first = place(gpu_run(1, 2).spec, agents, busy);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->front().gpus, (std::vector<int>{0, 1}));
  busy.take(*first, true);
  auto second = place(gpu_run(2, 2).spec, agents, busy);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->front().gpus, (std::vector<int>{2, 3}));
  busy.take(*second, true);
  EXPECT_FALSE(place(gpu_run(3, 1).spec, agents, busy)) << "every GPU is held";
  EXPECT_FALSE(busy.idle("a"));
}

TEST(Place, MultiNodeRunsTakeDistinctAgentsLeaderFirst) {
  const std::vector<Store::Agent> agents{agent("a", 4, true), agent("b", 4, true), agent("c", 4, true)};
  auto hosts = place(gpu_run(1, 2, 3).spec, agents, {}, "b");
  ASSERT_TRUE(hosts);
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].agent, "b") << "the leader starts mpirun and comes first";
  EXPECT_EQ((*hosts)[1].agent, "a");
  EXPECT_EQ((*hosts)[2].agent, "c");
  for (const auto& h : *hosts) EXPECT_EQ(h.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(place(gpu_run(1, 2, 4).spec, agents, {})) << "4 nodes on 3 agents";
}

TEST(Place, MultiNodeGpuRunsCarryEachGpusNumaNode) {
  // The ranks on other nodes bind themselves by these; -1 where the agent could not read one.
  Store::Agent a = agent("a", 4, true), b = agent("b", 4, true);
  for (int i = 0; i < 4; ++i) a.info["gpus"][i]["numa_node"] = i / 2;
  b.info["gpus"][0]["numa_node"] = 1;
  b.info["gpus"][1]["numa_node"] = nullptr;
  auto hosts = place(gpu_run(1, 2, 2).spec, {a, b}, {}, "a");
  ASSERT_TRUE(hosts);
  EXPECT_EQ((*hosts)[0].numa, (std::vector<int>{0, 0}));
  EXPECT_EQ((*hosts)[1].numa, (std::vector<int>{1, -1}));
  EXPECT_EQ(hosts_from_json(to_json(*hosts)), *hosts) << "kept with the run";
  auto one = place(gpu_run(1, 2, 1).spec, {a, b}, {}, "a");
  ASSERT_TRUE(one);
  EXPECT_TRUE((*one)[0].numa.empty()) << "one node: the agent binds its ranks from its own inventory";
}

TEST(Place, PlacementAgentsLimitTheNodesARunMayUse) {
  // scalebench accept's bisection measures halves of the cluster: a run names its agents.
  const std::vector<Store::Agent> agents{agent("a", 0, false), agent("b", 0, false), agent("c", 0, false)};
  Store::Run r = run(1, false, 1, 2);
  r.spec["agents"] = Json{"c", "b"};
  auto hosts = place(r.spec, agents, {});
  ASSERT_TRUE(hosts);
  EXPECT_EQ((*hosts)[0].agent, "b");
  EXPECT_EQ((*hosts)[1].agent, "c");
  EXPECT_FALSE(place(r.spec, agents, {}, "a")) << "a is not one of the run's agents";
  r.spec["nodes"] = 3;
  EXPECT_EQ(never_fits(r.spec, agents), "needs 3 nodes; the cluster has 2 agents of those placement.agents names");
}

TEST(Schedule, ARunPinnedElsewhereDoesNotHoldBackTheLeadersRuns) {
  // accept's per-node checks: each pinned to its node, all queued at once, all start at once.
  const std::vector<Store::Agent> agents{agent("a", 0, false), agent("b", 0, false)};
  Store::Run on_a = run(1, false, 1), on_b = run(2, false, 1), both = run(3, false, 1, 2);
  on_a.spec["agents"] = Json{"a"};
  on_b.spec["agents"] = Json{"b"};
  both.spec["agents"] = Json{"a", "b"};
  const Schedule s = schedule(std::vector<Store::Run>{on_a, on_b, both}, agents, {}, "b");
  ASSERT_EQ(s.start.size(), 1u);
  EXPECT_EQ(s.start[0].first, 2) << "b's own run starts though a's is ahead of it";
  // A run that may use the leader but cannot start now still holds back those behind it.
  Store::Run later_on_b = run(4, false, 1);
  later_on_b.spec["agents"] = Json{"b"};
  Occupancy busy;
  busy.take({HostPlacement{"a", "a", {}}}, false);
  const Schedule t = schedule(std::vector<Store::Run>{both, later_on_b}, agents, busy, "b");
  EXPECT_TRUE(t.start.empty()) << "run 3 may use b but waits for a: run 4 waits behind it";
}

TEST(Place, HostsCarryTheAgentsAdvertisedAddress) {
  Store::Agent a = agent("a", 0, false);
  a.info["address"] = "10.0.0.7";
  Store::Agent b = agent("b", 0, false);  // no address: its hostname
  auto hosts = place(run(1, false, 2, 2).spec, {a, b}, {}, "a");
  ASSERT_TRUE(hosts);
  EXPECT_EQ((*hosts)[0].host, "10.0.0.7");
  EXPECT_EQ((*hosts)[1].host, "b");
  EXPECT_TRUE((*hosts)[0].gpus.empty());
}

TEST(Place, MultiNodeHostsCarryTheAgentsSlurmNodeName) {
  // Inside SLURM the leader lists these in its srun step; an agent outside SLURM registers none.
  Store::Agent a = agent("a", 0, false), b = agent("b", 0, false), c = agent("c", 0, false);
  a.info["slurm_node"] = "gpu-a";
  b.info["slurm_node"] = "gpu-b";
  auto hosts = place(run(1, false, 2, 3).spec, {a, b, c}, {}, "a");
  ASSERT_TRUE(hosts);
  EXPECT_EQ((*hosts)[0].slurm_node, "gpu-a");
  EXPECT_EQ((*hosts)[1].slurm_node, "gpu-b");
  EXPECT_EQ((*hosts)[2].slurm_node, "");
  EXPECT_EQ(to_json(*hosts)[0]["slurm_node"], "gpu-a");
  EXPECT_FALSE(to_json(*hosts)[2].contains("slurm_node"));
  EXPECT_EQ(hosts_from_json(to_json(*hosts)), *hosts) << "kept with the run";
  auto one = place(run(1, false, 2, 1).spec, {a, b, c}, {}, "a");
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)[0].slurm_node, "") << "one node: the agent knows its own";
}

TEST(Place, TheLeaderMustBeFreeToLead) {
  const std::vector<Store::Agent> agents{agent("a", 2, true), agent("b", 2, true)};
  Occupancy busy;
  busy.take({{"a", "a", {0, 1}}}, true);
  EXPECT_FALSE(place(gpu_run(1, 1).spec, agents, busy, "a"));
  auto elsewhere = place(gpu_run(1, 1).spec, agents, busy);
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->front().agent, "b");
}

TEST(Place, TightestFitKeepsLargeAgentsFree) {
  const std::vector<Store::Agent> agents{agent("big", 8, true), agent("small", 2, true)};
  auto hosts = place(gpu_run(1, 2).spec, agents, {});
  ASSERT_TRUE(hosts);
  EXPECT_EQ(hosts->front().agent, "small");
}

TEST(Place, HostRunsTakeTheirAgentsWhole) {
  const std::vector<Store::Agent> agents{agent("a", 4, true)};
  Occupancy busy;
  busy.take({{"a", "a", {}}}, false);
  EXPECT_FALSE(place(gpu_run(1, 1).spec, agents, busy)) << "a GPU run beside a host-memory run";
  EXPECT_FALSE(place(run(2, false, 2).spec, agents, busy));
  Occupancy gpu_busy;
  gpu_busy.take({{"a", "a", {3}}}, true);
  EXPECT_FALSE(place(run(2, false, 2).spec, agents, gpu_busy)) << "a host run beside a GPU run";
  EXPECT_TRUE(place(gpu_run(3, 3).spec, agents, gpu_busy));
}

TEST(Occupancy, ReadFromTheRunsInFlight) {
  Occupancy o =
      occupancy({held(1, true, {{"a", "h1", {0, 1}}, {"b", "h2", {2, 3}}}), held(2, false, {{"c", "h3", {}}})});
  EXPECT_EQ(o.gpus["a"], (std::set<int>{0, 1}));
  EXPECT_EQ(o.gpus["b"], (std::set<int>{2, 3}));
  EXPECT_TRUE(o.whole.count("c"));
  EXPECT_FALSE(o.whole.count("a"));
  Store::Run old = run(3, true, 2);  // a run stored before placements: its agent is taken whole
  old.state = "running";
  old.agent_id = "d";
  EXPECT_TRUE(occupancy({old}).whole.count("d"));
}

TEST(NeverFits, MoreNodesOrGpusThanTheCluster) {
  const std::vector<Store::Agent> agents{agent("a", 4, true), agent("b", 2, true), agent("c", 8, true, 8, "gone")};
  EXPECT_EQ(never_fits(gpu_run(1, 2, 2).spec, agents), "");
  EXPECT_EQ(never_fits(gpu_run(1, 4, 2).spec, agents), "needs 2 nodes with 4 GPUs each; the cluster has 1 such node");
  EXPECT_EQ(never_fits(gpu_run(1, 2, 3).spec, agents), "needs 3 nodes with 2 GPUs each; the cluster has 2 such nodes");
  EXPECT_EQ(never_fits(run(1, false, 1, 3).spec, agents), "needs 3 nodes; the cluster has 2 agents");
}

TEST(NeverFits, ALostAgentMayComeBack) {
  const std::vector<Store::Agent> agents{agent("a", 2, true), agent("b", 2, true, 8, "lost")};
  EXPECT_EQ(never_fits(gpu_run(1, 2, 2).spec, agents), "");
  EXPECT_FALSE(place(gpu_run(1, 2, 2).spec, agents, {})) << "it waits for b";
}

TEST(Schedule, PriorityFirstThenSubmissionOrder) {
  std::vector<Store::Run> queued{gpu_run(10, 1), gpu_run(11, 1, 1, 5), gpu_run(12, 1), gpu_run(13, 1, 1, 5)};
  sort_queue(queued);
  std::vector<long long> order;
  for (const auto& r : queued) order.push_back(r.id);
  EXPECT_EQ(order, (std::vector<long long>{11, 13, 10, 12}));
}

TEST(Schedule, OneLeaderTakesAsManyRunsAsItsGpusHold) {
  const std::vector<Store::Agent> agents{agent("a", 4, true)};
  Schedule s = schedule({gpu_run(1, 2), gpu_run(2, 1), gpu_run(3, 2)}, agents, {}, "a");
  ASSERT_EQ(s.start.size(), 2u) << "2 + 1 GPUs fit, the next 2 do not";
  EXPECT_EQ(s.start[0].first, 1);
  EXPECT_EQ(s.start[1].first, 2);
  EXPECT_EQ(s.start[1].second.front().gpus, (std::vector<int>{2}));
  EXPECT_TRUE(s.fail.empty());
}

TEST(Schedule, AWaitingRunHoldsBackTheRunsBehindIt) {
  const std::vector<Store::Agent> agents{agent("a", 4, true), agent("b", 4, true)};
  Occupancy busy;
  busy.take({{"b", "b", {0}}}, true);
  // Run 1 needs both nodes whole; b is partly busy, so run 1 waits and run 2 must not pass it.
  Schedule s = schedule({gpu_run(1, 4, 2), gpu_run(2, 1)}, agents, busy, "a");
  EXPECT_TRUE(s.start.empty());
  EXPECT_TRUE(s.fail.empty());
}

TEST(Schedule, RunsThatCanNeverFitFailAtOnceEvenBehindAWaitingRun) {
  const std::vector<Store::Agent> agents{agent("a", 4, true), agent("b", 4, true)};
  Occupancy busy;
  busy.take({{"b", "b", {0}}}, true);
  Schedule s = schedule({gpu_run(1, 4, 2), gpu_run(2, 8), gpu_run(3, 2, 3)}, agents, busy, "a");
  EXPECT_TRUE(s.start.empty());
  ASSERT_EQ(s.fail.size(), 2u);
  EXPECT_EQ(s.fail[0].first, 2);
  EXPECT_EQ(s.fail[0].second, "needs 1 node with 8 GPUs each; the cluster has 0 such nodes");
  EXPECT_EQ(s.fail[1].first, 3);
}

TEST(Schedule, ARunPlaceableWithAnotherLeaderWaitsForIt) {
  const std::vector<Store::Agent> agents{agent("a", 2, true), agent("b", 2, true)};
  Occupancy busy;
  busy.take({{"a", "a", {0, 1}}}, true);
  EXPECT_TRUE(schedule({gpu_run(1, 2)}, agents, busy, "a").start.empty());
  Schedule s = schedule({gpu_run(1, 2)}, agents, busy, "b");
  ASSERT_EQ(s.start.size(), 1u);
  EXPECT_EQ(s.start[0].second.front().agent, "b");
}

// A heartbeat's pass without the never-fits sweep reads the queue only up to the first run that
// cannot start, and leaves closed agents (still stopping a run) alone; the placement rules are
// those of a full pass.
TEST(Schedule, AQuickPassStopsAtTheFirstWaitingRun) {
  const std::vector<Store::Agent> agents{agent("a", 4, true), agent("b", 4, true)};
  Occupancy busy;
  busy.take({{"b", "b", {0}}}, true);
  Store::Run first = gpu_run(1, 4), waits = gpu_run(2, 4, 2), never = gpu_run(3, 16);
  PassOptions quick;
  quick.check_fits = false;
  quick.leader_agent = &agents[0];
  Schedule s = schedule({&first, &waits, &never}, agents, busy, "a", quick);
  ASSERT_EQ(s.start.size(), 1u);
  EXPECT_EQ(s.start[0].second.front().gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(s.fail.empty()) << "runs behind the waiting one are not looked at";
  std::set<std::string> closed{"b"};
  quick.closed = &closed;
  quick.leader_agent = &agents[1];
  EXPECT_TRUE(schedule({&first}, agents, Occupancy{}, "b", quick).start.empty()) << "b is closed";
  EXPECT_EQ(busy.gpus["b"], (std::set<int>{0})) << "the occupancy a pass reads is not changed";
}

TEST(Occupancy, ReleaseGivesBackWhatTakeTook) {
  Occupancy o;
  o.take({{"a", "a", {0, 1}}}, true);
  o.take({{"a", "a", {2}}}, true);
  o.take({{"c", "c", {}}}, false);
  o.release({{"a", "a", {0, 1}}}, true);
  EXPECT_EQ(o.gpus["a"], (std::set<int>{2}));
  o.release({{"c", "c", {}}}, false);
  EXPECT_TRUE(o.idle("c"));
  o.release({{"a", "a", {2}}}, true);
  EXPECT_TRUE(o.idle("a"));
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
  EXPECT_TRUE(place(to_json(runs[0]), agents, {}));
}

}  // namespace
}  // namespace scalebench
