#include "common/spec.hpp"
#include "common/sweep.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.hpp"

namespace scalebench {
namespace {

// Parses `yaml` as "exp.yaml" and returns the SpecError it must throw.
SpecError spec_error(const std::string& yaml) {
  try {
    parse_experiment(yaml, "exp.yaml");
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SpecError for:\n" << yaml;
  return SpecError({});
}

// The one issue about `field`; fails the test when there is not exactly one.
SourceIssue issue_for(const SpecError& e, const std::string& field) {
  const SourceIssue* found = nullptr;
  int count = 0;
  for (const auto& i : e.issues())
    if (i.field == field) {
      found = &i;
      ++count;
    }
  EXPECT_EQ(count, 1) << "issues about '" << field << "' in:\n" << e.what();
  return found ? *found : SourceIssue{};
}

void expect_at(const SourceIssue& i, int line, int column, const std::string& message_part) {
  EXPECT_EQ(i.file, "exp.yaml");
  EXPECT_EQ(i.line, line) << i.to_string();
  EXPECT_EQ(i.column, column) << i.to_string();
  EXPECT_NE(i.message.find(message_part), std::string::npos) << i.to_string();
}

const char* kHeader =
    "name: demo\n"
    "workload: collective\n";

// ---- bad input ----------------------------------------------------------------------------------

TEST(SpecErrors, MalformedYamlNamesFileLineAndColumn) {
  const std::string yaml = std::string(kHeader) +  // lines 1-2
                           "params:\n"             // 3
                           "  op: all_reduce\n"    // 4
                           " dtype: float32\n";    // 5: bad indentation
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(e.issues()[0], 5, 2, "malformed YAML");
  EXPECT_EQ(std::string(e.what()).rfind("exp.yaml:5:2: malformed YAML", 0), 0u) << e.what();
}

TEST(SpecErrors, UnclosedFlowListIsMalformed) {
  SpecError e = spec_error(std::string(kHeader) + "matrix:\n  op: [all_reduce, all_gather\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_EQ(e.issues()[0].file, "exp.yaml");
  EXPECT_GE(e.issues()[0].line, 4);
  EXPECT_NE(e.issues()[0].message.find("malformed YAML"), std::string::npos);
}

TEST(SpecErrors, DocumentMustBeAMapping) {
  SpecError e = spec_error("- name\n- workload\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_EQ(e.issues()[0].line, 1);
  EXPECT_NE(e.issues()[0].message.find("mapping"), std::string::npos);
}

TEST(SpecErrors, UnknownTopLevelKey) {
  SpecError e = spec_error(std::string(kHeader) + "repetition: 5\n");  // line 3
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "repetition");
  expect_at(i, 3, 1, "unknown key");
  EXPECT_NE(i.message.find("repetitions"), std::string::npos) << "the message lists the allowed keys";
  EXPECT_EQ(std::string(e.what()), "exp.yaml:3:1: field 'repetition': " + i.message);
}

TEST(SpecErrors, MissingNameAndWorkload) {
  SpecError e = spec_error("description: nothing else\n");
  ASSERT_EQ(e.issues().size(), 2u);
  expect_at(issue_for(e, "name"), 1, 1, "missing");
  expect_at(issue_for(e, "workload"), 1, 1, "missing");
}

TEST(SpecErrors, NameMustBeUsableAsALabel) {
  SpecError e = spec_error("name: has space\nworkload: collective\n");
  expect_at(issue_for(e, "name"), 1, 7, "letters, digits");
  SpecError e2 = spec_error("name: -leading-dash\nworkload: collective\n");
  issue_for(e2, "name");
}

TEST(SpecErrors, UnknownWorkload) {
  SpecError e = spec_error("name: demo\nworkload: colective\n");
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "workload");
  expect_at(i, 2, 11, "unknown workload 'colective'");
  EXPECT_NE(i.message.find("collective"), std::string::npos) << "the message lists the known workloads";
}

TEST(SpecErrors, UnknownParameter) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  op: all_reduce\n"    // 4
                           "  opp: all_gather\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "params.opp");
  expect_at(i, 5, 3, "unknown parameter of workload 'collective'");
  EXPECT_NE(i.message.find("min_bytes"), std::string::npos) << "the message lists the parameters";
}

TEST(SpecErrors, UnknownParameterInMatrixAndVariant) {
  const std::string yaml = std::string(kHeader) +          // 1-2
                           "matrix:\n"                     // 3
                           "  sizes: [1, 2]\n"             // 4
                           "variants:\n"                   // 5
                           "  a:\n"                        // 6
                           "    params: {colour: red}\n";  // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "matrix.sizes"), 4, 3, "unknown parameter");
  expect_at(issue_for(e, "variants.a.params.colour"), 7, 14, "unknown parameter");
}

TEST(SpecErrors, NegativeSize) {
  const std::string yaml = std::string(kHeader) +    // 1-2
                           "params:\n"               // 3
                           "  min_bytes: \"-1\"\n";  // 4
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "params.min_bytes"), 4, 14, "non-negative size");
}

TEST(SpecErrors, NegativeSizeInASweepListNamesTheElement) {
  const std::string yaml = std::string(kHeader) +              // 1-2
                           "matrix:\n"                         // 3
                           "  max_bytes: [1KiB, -1, 4KiB]\n";  // 4
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "matrix.max_bytes[1]"), 4, 21, "non-negative size");
}

TEST(SpecErrors, ZeroSizeIsBelowTheMinimum) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  max_bytes: 0\n");
  expect_at(issue_for(e, "params.max_bytes"), 4, 14, "at least 1");
}

TEST(SpecErrors, MinBytesLargerThanMaxBytes) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  min_bytes: 2KiB\n"   // 4
                           "  max_bytes: 1KiB\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "params"), 4, 3, "min_bytes (2048) is larger than max_bytes (1024)");
}

TEST(SpecErrors, MinBytesLargerThanTheDefaultMaxBytes) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  min_bytes: 128MiB\n");
  EXPECT_NE(issue_for(e, "params").message.find("larger than max_bytes (67108864)"), std::string::npos);
}

TEST(SpecErrors, AvgNeedsAFloatingPointDtype) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  reduce_op: avg\n  dtype: int32\n");
  EXPECT_NE(issue_for(e, "params").message.find("avg"), std::string::npos);
  EXPECT_NO_THROW(parse_experiment(std::string(kHeader) + "params: {reduce_op: avg, dtype: bfloat16}\n", "ok.yaml"));
}

TEST(SpecErrors, ZipListsOfDifferentLengths) {
  const std::string yaml = std::string(kHeader) +                 // 1-2
                           "zip:\n"                               // 3
                           "  min_bytes: [1KiB, 2KiB]\n"          // 4
                           "  max_bytes: [4KiB, 8KiB, 16KiB]\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "zip.max_bytes");
  expect_at(i, 5, 14, "same length");
  EXPECT_NE(i.message.find("2 for 'min_bytes', 3 here"), std::string::npos) << i.message;
}

TEST(SpecErrors, ZipParameterAlsoInMatrix) {
  const std::string yaml = std::string(kHeader) +   // 1-2
                           "matrix:\n"              // 3
                           "  op: [all_reduce]\n"   // 4
                           "zip:\n"                 // 5
                           "  op: [all_gather]\n";  // 6
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "zip.op"), 6, 7, "also swept in 'matrix'");
}

TEST(SpecErrors, SweepAxisMustBeANonEmptyList) {
  SpecError e = spec_error(std::string(kHeader) + "matrix:\n  op: all_reduce\n  dtype: []\n");
  expect_at(issue_for(e, "matrix.op"), 4, 7, "list of values");
  expect_at(issue_for(e, "matrix.dtype"), 5, 10, "empty list");
}

TEST(SpecErrors, BadEnumValueListsTheChoices) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  op: allreduce\n");
  SourceIssue i = issue_for(e, "params.op");
  expect_at(i, 4, 7, "unknown value 'allreduce'");
  EXPECT_NE(i.message.find("all_reduce"), std::string::npos);
}

TEST(SpecErrors, BadVariantEnvName) {
  const std::string yaml = std::string(kHeader) +             // 1-2
                           "variants:\n"                      // 3
                           "  pcie:\n"                        // 4
                           "    env:\n"                       // 5
                           "      NCCL_P2P_DISABLE: \"1\"\n"  // 6
                           "      1BAD-NAME: x\n";            // 7
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "variants.pcie.env.1BAD-NAME"), 7, 7, "not a valid environment variable name");
}

TEST(SpecErrors, BadVariantBody) {
  const std::string yaml = std::string(kHeader) +   // 1-2
                           "variants:\n"            // 3
                           "  a:\n"                 // 4
                           "    when: sometimes\n"  // 5
                           "  b:\n"                 // 6
                           "    envs: {X: 1}\n";    // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "variants.a.when"), 5, 11, "unknown value 'sometimes'");
  expect_at(issue_for(e, "variants.b.envs"), 7, 5, "unknown key");
}

TEST(SpecErrors, BadTimeout) {
  SpecError e = spec_error(std::string(kHeader) + "timeout: soon\n");  // line 3
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "timeout"), 3, 10, "positive duration");
  for (const char* bad : {"0", "-5s", "5 days", "[1, 2]"}) {
    SpecError e2 = spec_error(std::string(kHeader) + "timeout: " + bad + "\n");
    issue_for(e2, "timeout");
  }
}

TEST(SpecErrors, BadRepetitions) {
  SpecError e = spec_error(std::string(kHeader) + "repetitions: 0\n");
  expect_at(issue_for(e, "repetitions"), 3, 14, "at least 1");
  issue_for(spec_error(std::string(kHeader) + "repetitions: many\n"), "repetitions");
}

TEST(SpecErrors, BadPlacement) {
  const std::string yaml = std::string(kHeader) +             // 1-2
                           "placement:\n"                     // 3
                           "  nodes: 2000\n"                  // 4
                           "  gpus_per_node: [1, 0, most]\n"  // 5
                           "  oversize: shrink\n"             // 6
                           "  racks: 1\n";                    // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "placement.nodes"), 4, 10, "over the limit of 1024");
  expect_at(issue_for(e, "placement.gpus_per_node[1]"), 5, 22, "at least 1");
  expect_at(issue_for(e, "placement.gpus_per_node[2]"), 5, 25, "expected an integer");
  expect_at(issue_for(e, "placement.oversize"), 6, 13, "unknown value 'shrink'");
  expect_at(issue_for(e, "placement.racks"), 7, 3, "unknown key");
}

TEST(SpecErrors, BadReferences) {
  const std::string yaml = std::string(kHeader) +         // 1-2
                           "references:\n"                // 3
                           "  busbw:\n"                   // 4
                           "    lower: 0.05\n"            // 5
                           "    upper: -0.05\n"           // 6
                           "    better: faster\n"         // 7
                           "    where: {colour: red}\n";  // 8
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "references.busbw.target"), 5, 5, "missing");
  expect_at(issue_for(e, "references.busbw.lower"), 5, 12, "at or under 0");
  expect_at(issue_for(e, "references.busbw.upper"), 6, 12, "at or over 0");
  expect_at(issue_for(e, "references.busbw.better"), 7, 13, "unknown value 'faster'");
  expect_at(issue_for(e, "references.busbw.where.colour"), 8, 13, "unknown");
}

TEST(SpecErrors, EveryProblemIsReportedAtOnceOneALine) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  opp: x\n"            // 4
                           "timeout: soon\n"       // 5
                           "extra: 1\n";           // 6
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 3u) << e.what();
  const std::string what = e.what();
  EXPECT_NE(what.find("exp.yaml:4:3: field 'params.opp'"), std::string::npos) << what;
  EXPECT_NE(what.find("exp.yaml:5:10: field 'timeout'"), std::string::npos) << what;
  EXPECT_NE(what.find("exp.yaml:6:1: field 'extra'"), std::string::npos) << what;
  EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 2);
}

TEST(SpecErrors, DuplicateKeyIsAnError) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "timeout: 10s\n"        // 3
                           "params:\n"             // 4
                           "  op: reduce\n"        // 5
                           "  op: broadcast\n"     // 6
                           "timeout: 5m\n";        // 7
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 2u) << e.what();
  expect_at(issue_for(e, "timeout"), 7, 1, "duplicate key");
  expect_at(issue_for(e, "params.op"), 6, 3, "duplicate key");
}

TEST(SpecErrors, SpecErrorIsAScalebenchError) {
  try {
    parse_experiment("name: x\n", "exp.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exp.yaml:1:1"), std::string::npos);
  }
}

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

}  // namespace
}  // namespace scalebench

namespace scalebench {
namespace {

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

// A typo in rounds or a huge sweep is refused at validation, before anything expands it.
TEST(SpecErrors, TooManyRunsAreRefused) {
  SpecError e = spec_error("name: big\nworkload: collective\nrounds: 200000\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_NE(e.issues()[0].message.find("expands into up to 200000 runs"), std::string::npos) << e.what();
  EXPECT_NE(e.issues()[0].message.find("at most 100000"), std::string::npos);
  const Experiment ok = parse_experiment("name: ok\nworkload: collective\nrounds: 1000\n", "ok.yaml");
  EXPECT_EQ(ok.rounds, 1000);
}
}  // namespace
}  // namespace scalebench

namespace scalebench {
namespace {

TEST(SpecErrors, TextThatIsNotUtf8NamesTheLineColumnAndByte) {
  SpecError e = spec_error("name: demo\nworkload: collective\ndescription: caf\xFD\n");
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(e.issues()[0], 3, 17, "not UTF-8 text (byte 0xFD)");
  // Well-formed multi-byte text is fine; an overlong form or a cut sequence is not.
  EXPECT_EQ(
      parse_experiment("name: demo\nworkload: collective\ndescription: \xC2\xB5s and \xE2\x80\x94\n", "ok.yaml").name,
      "demo");
  EXPECT_EQ(spec_error("name: demo\nworkload: collective\ndescription: \xC0\xAF\n").issues()[0].line, 3);
  EXPECT_EQ(spec_error("name: demo\nworkload: collective\ndescription: \xE2\x80").issues()[0].line, 3);
}

}  // namespace
}  // namespace scalebench

// Inputs the fuzzer once crashed the parser with (fuzz/seeds/experiment_spec/): each must parse or
// fail with scalebench's Error naming the problem, never with another exception.
TEST(SpecFuzzSeeds, OnceCrashingInputsFailCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(SCALEBENCH_TEST_DATA) / ".." / ".." / "fuzz" / "seeds" / "experiment_spec";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ++files;
    try {
      scalebench::parse_experiment(text, entry.path().filename().string());
    } catch (const scalebench::Error&) {
      // a clear error is what bad input should get
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GE(files, 2);
}

namespace scalebench {
namespace {

// ---- bounds (issue 30): refused quickly, with a position ------------------------------------------

TEST(SpecBounds, BillionLaughsIsRefusedQuicklyAtTheAlias) {
  std::string yaml = std::string(kHeader) + "params:\n  a0: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    const char prev = static_cast<char>('a' + i - 1), cur = static_cast<char>('a' + i);
    yaml += "  a" + std::to_string(i) + ": &" + cur + " [";
    for (int k = 0; k < 9; ++k) yaml += std::string(k ? ", *" : "*") + prev;
    yaml += "]\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  SpecError e = spec_error(yaml);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_EQ(e.issues().size(), 1u) << e.what();
  EXPECT_GT(e.issues()[0].line, 4);  // at an alias of a deeper level
  EXPECT_NE(e.issues()[0].message.find("billion laughs"), std::string::npos) << e.what();
}

TEST(SpecBounds, AliasInsideItsOwnAnchorIsACycle) {
  SpecError e = spec_error(std::string(kHeader) + "params: &x\n  op: [*x]\n");
  expect_at(e.issues().at(0), 4, 8, "cycle");
}

TEST(SpecBounds, SecondDocumentIsRefused) {
  SpecError e = spec_error(std::string(kHeader) + "---\nname: other\n");
  EXPECT_EQ(e.issues().at(0).line, 3) << e.what();
  EXPECT_NE(e.issues().at(0).message.find("second YAML document"), std::string::npos);
  // A leading separator and a comment after the one document are fine.
  EXPECT_NO_THROW(parse_experiment(std::string("---\n") + kHeader + "# end\n", "exp.yaml"));
}

TEST(SpecBounds, EmptyFileIsRefusedAtLineOne) {
  for (const char* text : {"", "# only a comment\n", "\n\n"}) {
    SpecError e = spec_error(text);
    expect_at(e.issues().at(0), 1, 1, "empty");
  }
  SpecError scalar = spec_error("just text\n");
  expect_at(scalar.issues().at(0), 1, 1, "mapping");
}

TEST(SpecBounds, OversizedAndDeepTextIsRefused) {
  SpecError big = spec_error(std::string(kHeader) + "#" + std::string(1u << 20, 'x') + "\n");
  EXPECT_NE(big.issues().at(0).message.find("bytes"), std::string::npos);
  std::string deep = std::string(kHeader) + "params: ";
  for (int i = 0; i < 40; ++i) deep += "[";
  for (int i = 0; i < 40; ++i) deep += "]";
  SpecError nested = spec_error(deep + "\n");
  EXPECT_NE(nested.issues().at(0).message.find("levels deep"), std::string::npos) << nested.what();
}

TEST(SpecBounds, IntegersPastIntAreRefusedNotWrapped) {
  for (const char* key :
       {"repetitions: 4294967297", "rounds: 4294967297", "priority: 4294967296", "retries: 4294967296",
        "placement:\n  nodes: [4294967297]", "placement:\n  ranks_per_node: 4294967297"}) {
    SpecError e = spec_error(std::string(kHeader) + key + "\n");
    EXPECT_NE(std::string(e.what()).find("at most"), std::string::npos) << key << ": " << e.what();
  }
  EXPECT_EQ(parse_experiment(std::string(kHeader) + "repetitions: 1000000\n", "exp.yaml").repetitions, 1000000);
}

TEST(SpecBounds, DevZeroIsRefusedAfterTheLimit) {
  try {
    load_experiment_file("/dev/zero");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero:1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalebench
