#include "experiment/sweep.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/registry.hpp"
#include "common/error.hpp"

namespace scalebench {
namespace {

Experiment parse(const std::string& body) {
  return parse_experiment("name: sw\nworkload: collective\n" + body, "sweep.yaml");
}

// Host memory only, `slots` ranks per node.
ClusterShape host_shape(int slots) {
  ClusterShape s;
  s.ranks_per_node = slots;
  return s;
}

// GPU agents with `smallest` to `largest` GPUs each.
ClusterShape gpu_shape(int smallest, int largest) {
  ClusterShape s;
  s.gpu = true;
  s.gpus_per_node = smallest;
  s.max_gpus_per_node = largest;
  s.ranks_per_node = 16;
  return s;
}

const ClusterShape kHost = host_shape(8);
const ClusterShape kGpu4 = gpu_shape(4, 4);

std::vector<std::string> params_of(const std::vector<RunSpec>& runs, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& r : runs)
    out.push_back(r.params[key].is_string() ? r.params[key].get<std::string>() : r.params[key].dump());
  return out;
}

TEST(Expand, NoSweepIsOneRunWithTheExperimentsSettings) {
  auto runs = expand(parse("repetitions: 7\ntimeout: 90s\nparams: {op: broadcast}\n"), kHost);
  ASSERT_EQ(runs.size(), 1u);
  const RunSpec& r = runs[0];
  EXPECT_EQ(r.index, 0);
  EXPECT_EQ(r.experiment, "sw");
  EXPECT_EQ(r.workload, "collective");
  EXPECT_EQ(r.params["op"], "broadcast");
  EXPECT_EQ(r.params["dtype"], "float32") << "defaults are resolved into every run";
  EXPECT_EQ(r.variant, "default");
  EXPECT_TRUE(r.env.empty());
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.ranks_per_node, 1);
  EXPECT_FALSE(r.gpu);
  EXPECT_EQ(r.repetitions, 7);
  EXPECT_DOUBLE_EQ(r.timeout_s, 90);
  EXPECT_TRUE(r.skip_reason.empty());
  EXPECT_TRUE(r.fail_reason.empty());
}

TEST(Expand, MatrixIsTheCartesianProductFirstAxisOutermost) {
  auto runs = expand(parse("matrix:\n  op: [all_reduce, all_gather]\n  dtype: [float32, float64, int32]\n"), kHost);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(params_of(runs, "op"), (std::vector<std::string>{"all_reduce", "all_reduce", "all_reduce", "all_gather",
                                                             "all_gather", "all_gather"}));
  EXPECT_EQ(params_of(runs, "dtype"),
            (std::vector<std::string>{"float32", "float64", "int32", "float32", "float64", "int32"}));
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].index, static_cast<int>(i));
}

TEST(Expand, ZipMovesInLockStep) {
  auto runs = expand(parse("zip:\n  min_bytes: [1KiB, 1MiB, 8MiB]\n  max_bytes: [64KiB, 4MiB, 64MiB]\n"), kHost);
  ASSERT_EQ(runs.size(), 3u) << "a zip of three is three runs, not nine";
  EXPECT_EQ(params_of(runs, "min_bytes"), (std::vector<std::string>{"1024", "1048576", "8388608"}));
  EXPECT_EQ(params_of(runs, "max_bytes"), (std::vector<std::string>{"65536", "4194304", "67108864"}));
}

TEST(Expand, MatrixTimesZip) {
  auto runs = expand(parse("matrix:\n  op: [all_reduce, alltoall]\n"
                           "zip:\n  min_bytes: [1KiB, 1MiB]\n  max_bytes: [1MiB, 64MiB]\n"),
                     kHost);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(params_of(runs, "op"), (std::vector<std::string>{"all_reduce", "all_reduce", "alltoall", "alltoall"}));
  EXPECT_EQ(params_of(runs, "min_bytes"), (std::vector<std::string>{"1024", "1048576", "1024", "1048576"}));
}

TEST(Expand, VariantsAreInnermostSoPairsRunBackToBack) {
  auto runs = expand(parse("matrix:\n  op: [all_reduce, all_gather]\n"
                           "variants:\n  a:\n    env: {X: \"1\"}\n  b:\n    params: {warmup: 0}\n"),
                     kHost);
  ASSERT_EQ(runs.size(), 4u);
  std::vector<std::string> order;
  for (const auto& r : runs) order.push_back(r.params["op"].get<std::string>() + "/" + r.variant);
  EXPECT_EQ(order, (std::vector<std::string>{"all_reduce/a", "all_reduce/b", "all_gather/a", "all_gather/b"}));
  EXPECT_EQ(runs[0].env, (std::map<std::string, std::string>{{"X", "1"}}));
  EXPECT_TRUE(runs[1].env.empty());
  EXPECT_EQ(runs[0].params["warmup"], 5);
  EXPECT_EQ(runs[1].params["warmup"], 0) << "a variant's params override the experiment's";
}

TEST(Expand, RoundsInterleaveVariantsSoRatiosPairWithinARound) {
  auto runs = expand(parse("rounds: 3\nvariants:\n  a:\n    env: {X: \"1\"}\n  b:\n    env: {X: \"0\"}\n"), kHost);
  ASSERT_EQ(runs.size(), 6u);
  std::vector<std::string> order;
  for (const auto& r : runs) order.push_back(r.variant + std::to_string(r.round));
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3", "b3"}));
  EXPECT_EQ(run_spec_from_json(to_json(runs[5])).round, 3);
}

TEST(Expand, RoundsMustBePositive) {
  EXPECT_THROW(parse("rounds: 0\n"), SpecError);
  EXPECT_THROW(parse("rounds: two\n"), SpecError);
}

TEST(Expand, GpusPerProcessSetsProcessesButKeepsTheGpuCount) {
  auto runs = expand(parse("params: {gpus_per_process: 2}\nplacement:\n  gpus_per_node: [2, 4, 3]\n"), kGpu4);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].gpus_per_node, 2);
  EXPECT_EQ(runs[0].ranks_per_node, 1);
  EXPECT_EQ(runs[1].gpus_per_node, 4);
  EXPECT_EQ(runs[1].ranks_per_node, 2);
  EXPECT_EQ(runs[2].skip_reason, "gpus_per_process 2 does not divide the 3 GPUs placed");
  EXPECT_EQ(gpus_per_node_of(to_json(runs[1])), 4);
}

TEST(Expand, OldSpecsWithoutGpuCountHoldOneGpuPerProcess) {
  Json old{{"gpu", true}, {"ranks_per_node", 3}};
  EXPECT_EQ(gpus_per_node_of(old), 3);
  EXPECT_EQ(gpus_per_node_of(Json{{"gpu", false}, {"ranks_per_node", 3}}), 0);
}

TEST(Expand, TransportVariantsSetNcclEnvAndSkipOneGpu) {
  auto runs =
      expand(parse("placement:\n  gpus_per_node: [1, 2]\nvariants:\n  nv:\n    transport: nvlink\n"
                   "  pc:\n    transport: pcie\n  sock:\n    transport: net\n    env: {NCCL_SHM_DISABLE: \"0\"}\n"),
             kGpu4);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].transport, "nvlink");
  EXPECT_TRUE(runs[0].env.empty());
  EXPECT_TRUE(runs[0].skip_reason.empty()) << "one GPU still runs the nvlink variant as the baseline";
  EXPECT_NE(runs[1].skip_reason.find("one GPU crosses no link"), std::string::npos);
  EXPECT_EQ(runs[4].env, (std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}}));
  EXPECT_TRUE(runs[4].skip_reason.empty());
  EXPECT_EQ(runs[5].env.at("NCCL_SHM_DISABLE"), "0") << "the variant's env overrides the transport's";
  EXPECT_EQ(runs[5].env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_TRUE(expand(parse("variants:\n  nv:\n    transport: nvlink\n"), kHost).size() == 1u);
  EXPECT_EQ(expand(parse("variants:\n  nv:\n    transport: nvlink\n"), kHost)[0].variant, "default")
      << "a transport variant is a GPU variant";
  EXPECT_THROW(parse("variants:\n  x:\n    transport: infiniband\n"), SpecError);
}

TEST(Expand, CopyRunsOneProcessOverThePlacedGpusAndNeedsGpus) {
  const std::string body = "name: c\nworkload: copy\nplacement:\n  gpus_per_node: [2, all]\n";
  auto runs = expand(parse_experiment(body, "c.yaml"), kGpu4);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].gpus_per_node, 4);
  EXPECT_EQ(runs[1].ranks_per_node, 1);
  auto host = expand(parse_experiment(body, "c.yaml"), kHost);
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(host[0].skip_reason, "the copy workload needs GPUs; no agent has any");
}

TEST(Expand, EveryGpuWorkloadOnAHostOnlyClusterIsSkippedWithTheReason) {
  // The registry says which workloads need GPUs; train was once missing from a list here.
  for (const auto& def : workload_defs()) {
    if (!def.needs_gpus) continue;
    const std::string body = "name: g\nworkload: " + def.name + "\n";
    auto runs = expand(parse_experiment(body, "g.yaml"), kHost);
    ASSERT_FALSE(runs.empty()) << def.name;
    for (const auto& r : runs) {
      EXPECT_EQ(r.skip_reason, "the " + def.name + " workload needs GPUs; no agent has any") << def.name;
      EXPECT_TRUE(r.fail_reason.empty()) << def.name;
    }
  }
}

TEST(Expand, TrainOnAHostOnlyClusterIsSkippedNotFailed) {
  auto runs = expand(parse_experiment("name: t\nworkload: train\nparams: {model: tiny}\n", "t.yaml"), kHost);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].skip_reason, "the train workload needs GPUs; no agent has any");
  EXPECT_FALSE(runs[0].gpu);
  auto gpu = expand(parse_experiment("name: t\nworkload: train\nparams: {model: tiny}\n", "t.yaml"), kGpu4);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].skip_reason, "");
}

TEST(Expand, VariantParamsOverrideSweepValues) {
  auto runs =
      expand(parse("matrix:\n  dtype: [float32, int8]\nvariants:\n  wide:\n    params: {dtype: float64}\n"), kHost);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].params["dtype"], "float64");
  EXPECT_EQ(runs[1].params["dtype"], "float64");
}

TEST(Expand, PlacementsAreOutsideTheSweep) {
  auto runs = expand(parse("placement: {ranks_per_node: [1, 2]}\nmatrix:\n  op: [all_reduce, broadcast]\n"), kHost);
  ASSERT_EQ(runs.size(), 4u);
  std::vector<int> ranks;
  for (const auto& r : runs) ranks.push_back(r.ranks_per_node);
  EXPECT_EQ(ranks, (std::vector<int>{1, 1, 2, 2}));
  EXPECT_EQ(params_of(runs, "op"), (std::vector<std::string>{"all_reduce", "broadcast", "all_reduce", "broadcast"}));
}

TEST(Expand, HostShapeUsesRanksPerNodeAndGpuShapeUsesGpusPerNode) {
  Experiment ex = parse("placement: {gpus_per_node: [2], ranks_per_node: [3]}\n");
  auto host = expand(ex, kHost);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].ranks_per_node, 3);
  EXPECT_FALSE(host[0].gpu);
  auto gpu = expand(ex, kGpu4);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].ranks_per_node, 2);
  EXPECT_TRUE(gpu[0].gpu);
}

TEST(Expand, AllGpusResolvesToTheShapesGpuCountAndDuplicatesCollapse) {
  Experiment ex = parse("placement: {gpus_per_node: [1, 2, all, 4]}\n");
  auto runs = expand(ex, kGpu4);
  ASSERT_EQ(runs.size(), 3u) << "'all' is 4 here, the same placement as the explicit 4";
  EXPECT_EQ(runs[0].ranks_per_node, 1);
  EXPECT_EQ(runs[1].ranks_per_node, 2);
  EXPECT_EQ(runs[2].ranks_per_node, 4);
  for (const auto& r : runs) EXPECT_TRUE(r.fail_reason.empty() && r.skip_reason.empty());

  auto eight = expand(parse("placement: {gpus_per_node: all}\n"), gpu_shape(8, 8));
  ASSERT_EQ(eight.size(), 1u);
  EXPECT_EQ(eight[0].ranks_per_node, 8);
}

TEST(Expand, GpuVariantsAreDroppedOnHostShapes) {
  Experiment ex = parse("variants:\n  nvlink: {when: gpu}\n  pcie: {when: gpu}\n  shm: {when: host}\n  both:\n");
  auto host = expand(ex, kHost);
  std::vector<std::string> names;
  for (const auto& r : host) names.push_back(r.variant);
  EXPECT_EQ(names, (std::vector<std::string>{"shm", "both"}));

  auto gpu = expand(ex, kGpu4);
  names.clear();
  for (const auto& r : gpu) names.push_back(r.variant);
  EXPECT_EQ(names, (std::vector<std::string>{"nvlink", "pcie", "both"}));
}

TEST(Expand, OnlyGpuVariantsOnAHostShapeLeaveTheDefault) {
  auto runs =
      expand(parse("variants:\n  nvlink: {when: gpu}\n  pcie: {when: gpu, env: {NCCL_P2P_DISABLE: \"1\"}}\n"), kHost);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].variant, "default");
  EXPECT_TRUE(runs[0].env.empty());
}

TEST(Expand, OversizeFailMarksTheRunFailed) {
  auto runs = expand(parse("placement: {gpus_per_node: [2, 8]}\n"), kGpu4);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].fail_reason.empty());
  EXPECT_TRUE(runs[0].skip_reason.empty());
  EXPECT_NE(runs[1].fail_reason.find("needs 8 GPUs per node"), std::string::npos) << runs[1].fail_reason;
  EXPECT_TRUE(runs[1].skip_reason.empty());
}

TEST(Expand, OversizeSkipMarksTheRunSkipped) {
  auto runs = expand(parse("placement: {gpus_per_node: [2, 8], oversize: skip}\n"), kGpu4);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].skip_reason.empty());
  EXPECT_NE(runs[1].skip_reason.find("needs 8 GPUs per node"), std::string::npos) << runs[1].skip_reason;
  EXPECT_TRUE(runs[1].fail_reason.empty());
}

TEST(Expand, OnAMixedClusterAllIsTheSmallestAndOversizeIsOverTheLargest) {
  auto runs = expand(parse("placement: {gpus_per_node: [all, 8, 16]}\n"), gpu_shape(4, 8));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].ranks_per_node, 4) << "'all' must fit on every GPU agent";
  EXPECT_EQ(runs[1].ranks_per_node, 8);
  EXPECT_TRUE(runs[1].fail_reason.empty()) << "the 8-GPU agent can take it: " << runs[1].fail_reason;
  EXPECT_EQ(runs[2].ranks_per_node, 16);
  EXPECT_NE(runs[2].fail_reason.find("needs 16 GPUs per node"), std::string::npos);
  EXPECT_NE(runs[2].fail_reason.find("8"), std::string::npos) << "names what the largest agent has";
}

TEST(Expand, BackendAutoIsNcclOnGpusAndMpiOnHosts) {
  Experiment ex = parse("");
  ASSERT_EQ(ex.params["backend"], "auto");
  auto gpu = expand(ex, kGpu4);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].params["backend"], "nccl");
  EXPECT_TRUE(gpu[0].gpu);
  auto host = expand(ex, kHost);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].params["backend"], "mpi");
  EXPECT_FALSE(host[0].gpu);
}

TEST(Expand, NcclBackendOnAHostShapeIsSkipped) {
  auto runs = expand(parse("params: {backend: nccl}\n"), kHost);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NE(runs[0].skip_reason.find("needs GPUs"), std::string::npos);
  EXPECT_TRUE(runs[0].fail_reason.empty());
}

TEST(Expand, MpiBackendOnAGpuShapeIsAHostMemoryRun) {
  auto runs = expand(parse("params: {backend: mpi}\nplacement: {gpus_per_node: [2]}\n"), kGpu4);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].params["backend"], "mpi");
  EXPECT_FALSE(runs[0].gpu);
  EXPECT_TRUE(runs[0].skip_reason.empty());
  EXPECT_TRUE(runs[0].fail_reason.empty());
}

TEST(Expand, InvalidSweepCombinationIsSkippedNotRejected) {
  auto runs = expand(parse("matrix:\n  min_bytes: [1KiB, 128MiB]\n"), kHost);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].skip_reason.empty());
  EXPECT_NE(runs[1].skip_reason.find("invalid parameter combination"), std::string::npos);
  EXPECT_NE(runs[1].skip_reason.find("max_bytes"), std::string::npos);
}

TEST(RunSpecJson, RoundTrips) {
  auto runs = expand(parse("matrix:\n  op: [reduce]\nvariants:\n  v:\n    env: {A: b, C: d}\n"
                           "placement: {gpus_per_node: [8], oversize: skip}\nrepetitions: 3\ntimeout: 2m\n"),
                     kGpu4);
  ASSERT_EQ(runs.size(), 1u);
  const RunSpec& r = runs[0];
  Json j = to_json(r);
  EXPECT_EQ(j["experiment"], "sw");
  EXPECT_EQ(j["env"], (Json{{"A", "b"}, {"C", "d"}}));
  EXPECT_EQ(j["ranks_per_node"], 8);
  RunSpec back = run_spec_from_json(j);
  EXPECT_EQ(back.index, r.index);
  EXPECT_EQ(back.experiment, r.experiment);
  EXPECT_EQ(back.workload, r.workload);
  EXPECT_EQ(back.params, r.params);
  EXPECT_EQ(back.variant, "v");
  EXPECT_EQ(back.env, r.env);
  EXPECT_EQ(back.nodes, 1);
  EXPECT_EQ(back.ranks_per_node, 8);
  EXPECT_TRUE(back.gpu);
  EXPECT_EQ(back.repetitions, 3);
  EXPECT_DOUBLE_EQ(back.timeout_s, 120);
  EXPECT_EQ(back.skip_reason, r.skip_reason);
  EXPECT_FALSE(back.skip_reason.empty());
  EXPECT_EQ(back.fail_reason, "");
  EXPECT_EQ(to_json(back), j);
}

TEST(RunSpecJson, MissingFieldsTakeDefaults) {
  RunSpec r = run_spec_from_json(Json::object());
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.ranks_per_node, 1);
  EXPECT_FALSE(r.gpu);
  EXPECT_EQ(r.repetitions, 20);
  EXPECT_DOUBLE_EQ(r.timeout_s, 600);
  EXPECT_TRUE(r.params.is_object());
}

}  // namespace
}  // namespace scalebench
