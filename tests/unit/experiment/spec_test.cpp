#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "tests/unit/experiment/spec_test_util.hpp"

namespace scalebench {
namespace {
using namespace spec_test;

// ---- valid input --------------------------------------------------------------------------------

TEST(SpecValid, MinimalSpecGetsEveryDefault) {
  Experiment ex = parse_experiment(kHeader, "min.yaml");
  EXPECT_EQ(ex.source, "min.yaml");
  EXPECT_EQ(ex.name, "demo");
  EXPECT_EQ(ex.workload, "collective");
  EXPECT_EQ(ex.params["backend"], "auto");
  EXPECT_EQ(ex.params["op"], "all_reduce");
  EXPECT_EQ(ex.params["dtype"], "float32");
  EXPECT_EQ(ex.params["min_bytes"], 8);
  EXPECT_EQ(ex.params["max_bytes"], 64 * 1024 * 1024);
  EXPECT_EQ(ex.params["iters"], "auto");
  EXPECT_EQ(ex.params["check"], true);
  EXPECT_TRUE(ex.matrix.empty());
  EXPECT_TRUE(ex.zip.empty());
  EXPECT_TRUE(ex.variants.empty());
  EXPECT_TRUE(ex.references.empty());
  EXPECT_EQ(ex.placement.nodes, std::vector<int>{1});
  EXPECT_EQ(ex.placement.gpus_per_node, std::vector<Json>{1});
  EXPECT_EQ(ex.placement.ranks_per_node, std::vector<int>{1});
  EXPECT_EQ(ex.placement.oversize, "fail");
  EXPECT_EQ(ex.repetitions, 20);
  EXPECT_DOUBLE_EQ(ex.timeout_s, 600);
}

const char* kFullSpec = R"(name: full.spec-1
description: everything at once
workload: collective
params:
  op: all_reduce
  min_bytes: 1KiB
  max_bytes: 64MiB
  step_factor: 4
  iters: 50
  in_place: yes
matrix:
  dtype: [float32, bfloat16]
  op: [all_reduce, all_gather]
zip:
  min_bytes: [1KiB, 1MiB]
  max_bytes: [1MiB, 64MiB]
placement:
  nodes: 1
  gpus_per_node: [1, 2, all]
  ranks_per_node: [1, 4]
  oversize: skip
variants:
  nvlink:
    when: gpu
  pcie:
    when: gpu
    env: {NCCL_P2P_DISABLE: "1"}
    params: {warmup: 2}
  plain:
repetitions: 10
timeout: 5m
references:
  busbw:
    target: 300
    lower: -0.05
    upper: 0.5
    unit: GB/s
    better: higher
    where: {size: 64MiB, dtype: float32, variant: nvlink, gpus: 8}
  time:
    target: 10
    upper: 0.1
    unit: us
    better: lower
)";

TEST(SpecValid, FullSpec) {
  Experiment ex = parse_experiment(kFullSpec, "full.yaml");
  EXPECT_EQ(ex.name, "full.spec-1");
  EXPECT_EQ(ex.description, "everything at once");
  EXPECT_EQ(ex.workload, "collective");

  // params: typed, defaults filled in for what the file leaves out
  EXPECT_EQ(ex.params["min_bytes"], 1024);
  EXPECT_TRUE(ex.params["min_bytes"].is_number_unsigned());
  EXPECT_EQ(ex.params["max_bytes"], 64ull << 20);
  EXPECT_DOUBLE_EQ(ex.params["step_factor"].get<double>(), 4);
  EXPECT_EQ(ex.params["iters"], 50);
  EXPECT_EQ(ex.params["in_place"], true);
  EXPECT_EQ(ex.params["warmup"], 5);
  EXPECT_EQ(ex.params["reduce_op"], "sum");

  ASSERT_EQ(ex.matrix.size(), 2u);
  EXPECT_EQ(ex.matrix[0].param, "dtype");
  EXPECT_EQ(ex.matrix[0].values, (std::vector<Json>{"float32", "bfloat16"}));
  EXPECT_EQ(ex.matrix[1].param, "op");
  EXPECT_EQ(ex.matrix[1].values, (std::vector<Json>{"all_reduce", "all_gather"}));

  ASSERT_EQ(ex.zip.size(), 2u);
  EXPECT_EQ(ex.zip[0].param, "min_bytes");
  EXPECT_EQ(ex.zip[0].values, (std::vector<Json>{1024, 1 << 20}));
  EXPECT_EQ(ex.zip[1].param, "max_bytes");
  EXPECT_EQ(ex.zip[1].values, (std::vector<Json>{1 << 20, 64 << 20}));

  EXPECT_EQ(ex.placement.nodes, std::vector<int>{1});
  EXPECT_EQ(ex.placement.gpus_per_node, (std::vector<Json>{1, 2, "all"}));
  EXPECT_EQ(ex.placement.ranks_per_node, (std::vector<int>{1, 4}));
  EXPECT_EQ(ex.placement.oversize, "skip");

  ASSERT_EQ(ex.variants.size(), 3u);
  EXPECT_EQ(ex.variants[0].name, "nvlink");
  EXPECT_EQ(ex.variants[0].when, "gpu");
  EXPECT_TRUE(ex.variants[0].env.empty());
  EXPECT_EQ(ex.variants[1].name, "pcie");
  EXPECT_EQ(ex.variants[1].when, "gpu");
  EXPECT_EQ(ex.variants[1].env, (std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}}));
  EXPECT_EQ(ex.variants[1].params, (Json{{"warmup", 2}}));
  EXPECT_EQ(ex.variants[2].name, "plain");
  EXPECT_EQ(ex.variants[2].when, "any");
  EXPECT_TRUE(ex.variants[2].params.empty());

  EXPECT_EQ(ex.repetitions, 10);
  EXPECT_DOUBLE_EQ(ex.timeout_s, 300);

  ASSERT_EQ(ex.references.size(), 2u);
  const Reference& busbw = ex.references[0];
  EXPECT_EQ(busbw.metric, "busbw");
  EXPECT_DOUBLE_EQ(busbw.target, 300);
  ASSERT_TRUE(busbw.lower && busbw.upper);
  EXPECT_DOUBLE_EQ(*busbw.lower, -0.05);
  EXPECT_DOUBLE_EQ(*busbw.upper, 0.5);
  EXPECT_EQ(busbw.unit, "GB/s");
  EXPECT_EQ(busbw.better, "higher");
  EXPECT_EQ(busbw.where["size"], 64ull << 20);
  EXPECT_EQ(busbw.where["dtype"], "float32");
  EXPECT_EQ(busbw.where["variant"], "nvlink");
  EXPECT_EQ(busbw.where["gpus"], "8");
  const Reference& time = ex.references[1];
  EXPECT_EQ(time.metric, "time");
  EXPECT_FALSE(time.lower);
  EXPECT_DOUBLE_EQ(*time.upper, 0.1);
  EXPECT_EQ(time.better, "lower");
  EXPECT_TRUE(time.where.empty());
}

TEST(SpecValid, ScalarPlacementsAndBooleanSpellings) {
  Experiment ex = parse_experiment(std::string(kHeader) +
                                       "params: {check: off, in_place: true}\n"
                                       "placement: {gpus_per_node: all, ranks_per_node: 8}\n",
                                   "x.yaml");
  EXPECT_EQ(ex.params["check"], false);
  EXPECT_EQ(ex.params["in_place"], true);
  EXPECT_EQ(ex.placement.gpus_per_node, std::vector<Json>{"all"});
  EXPECT_EQ(ex.placement.ranks_per_node, std::vector<int>{8});
}

// Files written before collective's and copy's time_cap_s became time_cap still run: the former
// name is read as the new one in params, sweeps and references, and giving both is an error.
TEST(SpecValid, FormerParameterNamesAreReadAsTheCurrentOnes) {
  const Experiment ex = parse_experiment(std::string(kHeader) +
                                             "params: {time_cap_s: 0.25}\n"
                                             "matrix: {time_cap_s: [0.5, 1]}\n"
                                             "references:\n"
                                             "  busbw: {target: 10, where: {time_cap_s: 0.5}}\n",
                                         "old.yaml");
  EXPECT_EQ(ex.params["time_cap"], 0.25);
  EXPECT_FALSE(ex.params.contains("time_cap_s"));
  ASSERT_EQ(ex.matrix.size(), 1u);
  EXPECT_EQ(ex.matrix[0].param, "time_cap");
  ASSERT_EQ(ex.references.size(), 1u);
  EXPECT_EQ(ex.references[0].where["time_cap"], 0.5);
  SpecError e = spec_error(std::string(kHeader) + "params: {time_cap: 1, time_cap_s: 2}\n");  // line 3
  expect_at(issue_for(e, "params.time_cap_s"), 3, 23, "former name of 'time_cap', which is given too");
}

TEST(SpecValid, PlacementAgentsGoWithEveryRun) {
  const Experiment ex =
      parse_experiment(std::string(kHeader) + "placement: {nodes: 2, agents: [node-2, node-3]}\n", "x.yaml");
  EXPECT_EQ(ex.placement.agents, (std::vector<std::string>{"node-2", "node-3"}));
  const std::vector<RunSpec> runs = expand(ex, ClusterShape{false, 0, 0, 8});
  ASSERT_FALSE(runs.empty());
  for (const RunSpec& r : runs) {
    EXPECT_EQ(r.agents, ex.placement.agents);
    EXPECT_EQ(to_json(r)["agents"], Json({"node-2", "node-3"}));
    EXPECT_EQ(run_spec_from_json(to_json(r)).agents, ex.placement.agents);
  }
  SpecError e = spec_error(std::string(kHeader) + "placement: {agents: []}\n");  // line 3
  expect_at(issue_for(e, "placement.agents"), 3, 21, "non-empty list of agent names");
}

TEST(SpecFile, LoadUsesThePathInMessages) {
  const auto path =
      std::filesystem::temp_directory_path() / ("scalebench-spec-test-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(path);
    out << kHeader << "timeout: soon\n";
  }
  try {
    load_experiment_file(path.string());
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].file, path.string());
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":3:10:", 0), 0u) << e.what();
  }
  {
    std::ofstream out(path);
    out << kFullSpec;
  }
  EXPECT_EQ(load_experiment_file(path.string()).name, "full.spec-1");
  std::filesystem::remove(path);
}

TEST(SpecFile, MissingFileIsAnErrorNamingThePath) {
  try {
    load_experiment_file("/nonexistent/dir/exp.yaml");
    FAIL() << "no error";
  } catch (const SpecError&) {
    FAIL() << "a missing file is not a validation problem";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/exp.yaml"), std::string::npos);
  }
}

TEST(StudyFile, SeveralExperimentsSplitAtSeparatorsAndKeepTheirLines) {
  const std::string text =
      "# a study of two experiments\n"  // 1
      "---\n"                           // 2
      "name: first\n"                   // 3
      "workload: collective\n"          // 4
      "--- \n"                          // 5
      "# the second\n"                  // 6
      "name: second\n"                  // 7
      "workload: collective\n"          // 8
      "params:\n"                       // 9
      "  op: all_sum\n"                 // 10: not an op
      "---\n";                          // 11: nothing after it
  const std::vector<std::string> docs = split_yaml_documents(text);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(parse_experiment(docs[0], "study.yaml").name, "first");
  try {
    parse_experiment(docs[1], "study.yaml");
    FAIL() << "all_sum accepted";
  } catch (const SpecError& e) {
    ASSERT_FALSE(e.issues().empty());
    EXPECT_EQ(e.issues()[0].line, 10) << e.what();
    EXPECT_EQ(e.issues()[0].field, "params.op") << e.what();
  }
  // One experiment, no separator: the file as it is.
  EXPECT_EQ(split_yaml_documents("name: only\nworkload: collective\n").size(), 1u);
  // "---" inside a value is not a separator.
  EXPECT_EQ(split_yaml_documents("name: a\ndescription: x --- y\nworkload: collective\n").size(), 1u);
}

}  // namespace
}  // namespace scalebench
