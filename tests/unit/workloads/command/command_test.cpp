#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "experiment/command_spec.hpp"
#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"
#include "workloads/command/command_launch.hpp"
#include "workloads/command/figures.hpp"
#include "workloads/command/nccl_tests_output.hpp"

namespace scalebench {
namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(SCALEBENCH_TEST_DATA) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string spec_errors(const std::string& yaml) {
  try {
    parse_experiment(yaml, "t.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(Placeholders, SubstitutesNamesAndKeepsEscapedBraces) {
  EXPECT_EQ(substitute("-b {min_bytes} {{x}}", {{"min_bytes", "8"}}), "-b 8 {x}");
  EXPECT_EQ(placeholders("{op}_perf -n {iters}"), (std::vector<std::string>{"op", "iters"}));
  EXPECT_THROW(substitute("{nope}", {}), Error);
  EXPECT_THROW(placeholders("{unclosed"), Error);
  EXPECT_THROW(placeholders("stray}"), Error);
}

TEST(CommandSpec, JsonRoundTrip) {
  CommandSpec c;
  c.program = "{op}_perf";
  c.args = {"-b", "{min_bytes}"};
  c.launch = "ranks";
  c.parser = "nccl-tests";
  c.figures.push_back(Figure{"bw", "(\\d+) (\\S+)", 2, {{"size", 1}}, "GB/s", "higher"});
  const CommandSpec back = command_from_json(to_json(c));
  EXPECT_EQ(back.program, c.program);
  EXPECT_EQ(back.args, c.args);
  EXPECT_EQ(back.launch, "ranks");
  ASSERT_EQ(back.figures.size(), 1u);
  EXPECT_EQ(back.figures[0].context.at("size"), 1);
  EXPECT_EQ(back.figures[0].value_group, 2);
}

TEST(CommandExperiment, ParsesFreeParamsAndExpandsRuns) {
  const Experiment ex = parse_experiment(R"(name: c
workload: command
command:
  program: ./bench
  args: [--n, "{n}", --label, "{label}"]
  launch: once
  figures:
    rate: {regex: 'rate=([0-9.]+)', unit: items/s}
params:
  label: fast
matrix:
  n: [1, 2KiB]
)",
                                         "t.yaml");
  ASSERT_TRUE(ex.command);
  EXPECT_EQ(ex.params["label"], "fast");
  ClusterShape host;
  host.ranks_per_node = 4;
  const auto runs = expand(ex, host);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].workload, "command");
  EXPECT_EQ(runs[0].params["n"], 1);
  EXPECT_EQ(runs[1].params["n"], "2KiB");  // free parameters keep their text: the program reads it
  EXPECT_EQ(runs[0].command["launch"], "once");
  EXPECT_EQ(runs[0].ranks_per_node, 1);
}

TEST(CommandExperiment, AVariantRunsAnotherProgramOnTheSamePoints) {
  const Experiment ex = parse_experiment(R"(name: vs
workload: collective
params: {backend: nccl, iters: 20}
matrix: {op: [all_reduce, broadcast]}
placement: {gpus_per_node: [2]}
variants:
  ours: {}
  theirs:
    workload: command
    command:
      program: "{op}_perf"
      args: [-n, "{iters}", -g, "1"]
      parser: nccl-tests
)",
                                         "t.yaml");
  ClusterShape gpus;
  gpus.gpu = true;
  gpus.gpus_per_node = gpus.max_gpus_per_node = 4;
  const auto runs = expand(ex, gpus);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].workload, "collective");
  EXPECT_TRUE(runs[0].command.is_null());
  EXPECT_EQ(runs[1].workload, "command");
  EXPECT_EQ(runs[1].params["op"], "all_reduce");
  EXPECT_EQ(runs[1].ranks_per_node, 2);  // launch mpi: one process per GPU
  const auto vars = command_vars(to_json(runs[3]), 7, "/tmp/o", "127.0.0.1", 29500);
  const auto plan = plan_command(command_from_json(runs[3].command), vars, 2, {"NCCL_P2P_DISABLE"}, MpirunOptions{});
  ASSERT_EQ(plan.size(), 1u);
  const std::vector<std::string> want{
      "mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", "-x", "NCCL_P2P_DISABLE", "broadcast_perf", "-n",
      "20",     "-g",  "1"};
  EXPECT_EQ(plan[0].argv, want);

  // Over several nodes every rank goes through the prefix (scalebench-run --exec-on-host), which
  // sets its host's GPUs and becomes the program.
  MpirunOptions multi;
  multi.args = {"--hostfile", "/w/run.hosts"};
  multi.rank_prefix = {"/bin/scalebench-run", "--exec-on-host", "SCALEBENCH_RUN_FILE", "--"};
  const auto wrapped = plan_command(command_from_json(runs[3].command), vars, 4, {}, multi);
  const std::vector<std::string> want_wrapped{"mpirun",
                                              "-np",
                                              "4",
                                              "--oversubscribe",
                                              "--bind-to",
                                              "none",
                                              "--hostfile",
                                              "/w/run.hosts",
                                              "/bin/scalebench-run",
                                              "--exec-on-host",
                                              "SCALEBENCH_RUN_FILE",
                                              "--",
                                              "broadcast_perf",
                                              "-n",
                                              "20",
                                              "-g",
                                              "1"};
  EXPECT_EQ(wrapped[0].argv, want_wrapped);
}

TEST(CommandExperiment, ErrorsNameFileLineAndField) {
  const std::string base = "name: c\nworkload: command\n";
  EXPECT_NE(spec_errors(base).find("t.yaml:1:1: field 'command': missing"), std::string::npos) << spec_errors(base);
  const std::string typo = base + "command:\n  program: x\n  args: [\"{sise}\"]\n  parser: nccl-tests\n";
  EXPECT_NE(spec_errors(typo).find("t.yaml:5:10: field 'command.args[0]': {sise} is neither a parameter"),
            std::string::npos)
      << spec_errors(typo);
  const std::string regex = base + "command:\n  program: x\n  figures:\n    bw: {regex: '(unclosed'}\n";
  EXPECT_NE(spec_errors(regex).find("'command.figures.bw.regex': not a valid regular expression"), std::string::npos)
      << spec_errors(regex);
  const std::string group = base + "command:\n  program: x\n  figures:\n    bw: {regex: 'a(1)', value_group: 2}\n";
  EXPECT_NE(spec_errors(group).find("'command.figures.bw.value_group': the regex has 1 capture group(s), not 2"),
            std::string::npos)
      << spec_errors(group);
  const std::string mllog = base + "command:\n  program: x\n  parser: mllog\n";
  EXPECT_EQ(spec_errors(mllog).find("parser"), std::string::npos) << spec_errors(mllog);
  const std::string nothing = base + "command:\n  program: x\n";
  EXPECT_NE(spec_errors(nothing).find("give a parser"), std::string::npos);
  const std::string json = base + "command:\n  program: x\n  parser: nccl-tests-json\n";
  EXPECT_NE(spec_errors(json).find("'command.output_file': parser nccl-tests-json reads the file"), std::string::npos);
  const std::string misplaced = "name: c\nworkload: collective\ncommand:\n  program: x\n";
  EXPECT_NE(spec_errors(misplaced).find("a command block belongs to 'workload: command'"), std::string::npos);
  const std::string launch = base + "command:\n  program: x\n  launch: srun\n  parser: nccl-tests\n";
  EXPECT_NE(spec_errors(launch).find("'command.launch': unknown value 'srun'; expected one of: mpi, ranks, once"),
            std::string::npos)
      << spec_errors(launch);
}

TEST(LaunchRanks, EachProcessGetsTorchrunVariables) {
  CommandSpec c;
  c.program = "python3";
  c.args = {"train.py", "--batch", "{batch}"};
  c.launch = "ranks";
  Json spec{{"params", {{"batch", 256}}}, {"nodes", 1}, {"ranks_per_node", 3}, {"gpu", true}, {"gpus_per_node", 3}};
  const auto vars = command_vars(spec, 1, "/tmp/o", "127.0.0.1", 12345);
  EXPECT_EQ(vars.at("gpus"), "3");
  const auto plan = plan_command(c, vars, 3, {}, MpirunOptions{});
  ASSERT_EQ(plan.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(plan[r].argv, (std::vector<std::string>{"python3", "train.py", "--batch", "256"}));
    EXPECT_EQ(plan[r].env.at("RANK"), std::to_string(r));
    EXPECT_EQ(plan[r].env.at("LOCAL_RANK"), std::to_string(r));
    EXPECT_EQ(plan[r].env.at("WORLD_SIZE"), "3");
    EXPECT_EQ(plan[r].env.at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_EQ(plan[r].env.at("MASTER_PORT"), "12345");
  }
  c.launch = "once";
  const auto once = plan_command(c, vars, 3, {}, MpirunOptions{});
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once[0].env.at("NNODES"), "1");
  EXPECT_FALSE(once[0].env.count("RANK"));
}

TEST(Figures, EveryMatchIsASampleGroupedByContext) {
  std::vector<Figure> figs{{"bw", R"(^size=(\d+) bw=([0-9.]+))", 2, {{"size", 1}}, "GB/s", "higher"},
                           {"loss", R"(loss ([0-9.eE+-]+))", 1, {}, "", "lower"},
                           {"absent", R"(nothing (\d+))", 1, {}, "", "higher"}};
  const std::string out = "size=8 bw=1.5\nsize=16 bw=3\nsize=8 bw=2.5\nstep 1 loss 2.0\nstep 2 loss 1e-1\n";
  const FigureReadout r = read_figures(figs, out);
  ASSERT_EQ(r.values.size(), 3u);
  EXPECT_EQ(r.values[0].point["size"], 8);
  EXPECT_EQ(r.values[0].samples, (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(r.values[1].point["size"], 16);
  EXPECT_EQ(r.values[2].samples, (std::vector<double>{2.0, 0.1}));
  EXPECT_EQ(r.missing, (std::vector<std::string>{"absent"}));
  const auto records = figure_records(Json{{"run_id", 1}}, r.values);
  EXPECT_DOUBLE_EQ(records[0]["value"].get<double>(), 2.0);  // median of the samples
  EXPECT_EQ(records[0]["stats"]["n"], 2);
  EXPECT_EQ(records[2]["better"], "lower");

  const FigureReadout bad = read_figures({{"x", R"(x=(\S+))", 1, {}, "", "higher"}}, "x=fast\n");
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("line 1: 'fast' is not a number"), std::string::npos);
}

TEST(Figures, ImagesPerSecondReadsTrainingScripts) {
  const std::vector<Figure> f{images_per_second_figure()};
  for (const char* line : {"images/s: 1234.5", "total images/sec: 1234.5", "img/s=1234.5"}) {
    const FigureReadout r = read_figures(f, std::string("noise\n") + line + "\n");
    ASSERT_EQ(r.values.size(), 1u) << line;
    EXPECT_DOUBLE_EQ(r.values[0].samples[0], 1234.5) << line;
  }
  EXPECT_EQ(read_figures(f, "images/s/gpu: 300\n").values.size(), 0u);
}

// all_reduce_perf -b 8 -e 64M -f 8 -g 1 -c 1 -J FILE, 2 ranks on 2 x H200, nccl-tests 2.19.6
// (docs/results/2026-11-21-nccl-tests-in-study-4xh200), the environment list taken out.
TEST(NcclTestsJson, ReadsCapturedAllReduce) {
  const NcclTestsOutput out = parse_nccl_tests_json(read_data("all_reduce_perf.json"));
  EXPECT_EQ(out.test, "all_reduce_perf");
  EXPECT_EQ(out.iters, 20);
  EXPECT_EQ(out.gpus_per_thread, 1);
  EXPECT_FALSE(out.cuda_graph);
  ASSERT_EQ(out.rows.size(), 8u);  // 8 B x 8^k up to 64 MiB: 8 B .. 16 MiB
  EXPECT_EQ(out.rows[0].size, 8u);
  EXPECT_EQ(out.rows[0].count, 2u);
  EXPECT_EQ(out.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(out.rows[0].out_of_place.time_us, 6.0903);
  EXPECT_EQ(out.rows.back().size, 16u << 20);
  EXPECT_GT(out.rows.back().out_of_place.busbw, 100.0);
  EXPECT_EQ(*out.rows.back().out_of_place.wrong, 0);
  EXPECT_EQ(*out.out_of_bounds, 0);
  const auto records = nccl_tests_records(Json{{"run_id", 3}}, out);
  ASSERT_EQ(records.size(), 24u);
  EXPECT_EQ(records[2]["metric"], "busbw");
  EXPECT_EQ(records[2]["point"]["size"], 8);
}

TEST(NcclTestsJson, InPlaceWithoutCheckIsUnchecked) {
  const NcclTestsOutput out = parse_nccl_tests_json(read_data("sendrecv_perf.json"));
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows[0].size, 1024u);
  EXPECT_FALSE(out.rows[0].in_place.wrong.has_value());
  const auto records = nccl_tests_records(Json::object(), out, true);
  EXPECT_EQ(records[0]["correctness"]["checked"], false);
}

TEST(NcclTestsJson, CutShortOrEmptyOutputIsAnError) {
  const std::string full = read_data("all_reduce_perf.json");
  EXPECT_THROW(parse_nccl_tests_json(full.substr(0, full.size() / 2)), Error);
  EXPECT_THROW(parse_nccl_tests_json(R"({"version":3,"results":[]})"), Error);
  EXPECT_THROW(parse_nccl_tests_json(R"({"version":3,"results":[{"size":"x"}]})"), Error);
}

}  // namespace
}  // namespace scalebench
