// The run-loop shell (workloads/runtime/workload_run.hpp) of a run outside MPI, as the command
// workload holds it: its records' context, what skip and fail report in each format, the exit code.
// The MPI side (capture_environment, gather, finish_together) runs in the integration tests'
// runs of the workloads.
#include "workloads/runtime/workload_run.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

struct Sink {
  std::vector<Json> records;
  RunRequest request(bool records_format) {
    RunRequest run;
    run.run_id = 42;
    run.spec = Json{{"experiment", "e"}, {"workload", "w"}, {"params", {{"n", 1}}}};
    run.records = records_format;
    run.emit = [this](const Json& r) { records.push_back(r); };
    return run;
  }
};

RunEnvironment local_environment() {
  RunEnvironment env;
  env.placement = Json{{"nodes", 1}, {"ranks", 1}};
  env.environment = Json{{"hostnames", {"node-a"}}};
  return env;
}

TEST(WorkloadRun, ContextHoldsTheRunTheResolvedParamsAndTheEnvironment) {
  Sink sink;
  const WorkloadRun shell(sink.request(true), Json{{"n", 1}, {"m", 2}}, local_environment());
  EXPECT_TRUE(shell.lead()) << "a run outside MPI is its own lead";
  const Json& c = shell.context();
  EXPECT_EQ(c["run_id"], 42);
  EXPECT_EQ(c["workload"], "w");
  EXPECT_EQ(c["params"], (Json{{"n", 1}, {"m", 2}})) << "the run's resolved parameters, not the spec's";
  EXPECT_EQ(c["placement"]["nodes"], 1);
  EXPECT_EQ(c["environment"]["hostnames"][0], "node-a");
}

TEST(WorkloadRun, SkipIsAStatusRecordAndLeavesTheExitCode) {
  Sink sink;
  WorkloadRun shell(sink.request(true), Json::object(), local_environment());
  shell.skip("no such program");
  ASSERT_EQ(sink.records.size(), 1u);
  EXPECT_EQ(sink.records[0]["status"], "skipped");
  EXPECT_EQ(sink.records[0]["reason"], "no such program");
  EXPECT_EQ(sink.records[0]["metric"], "run");
  EXPECT_EQ(sink.records[0]["run_id"], 42);
  EXPECT_EQ(shell.exit_code(), 0);
}

TEST(WorkloadRun, FailIsAStatusRecordAndExitCodeThree) {
  Sink sink;
  WorkloadRun shell(sink.request(true), Json::object(), local_environment());
  shell.fail("no GPU visible to rank 0");
  ASSERT_EQ(sink.records.size(), 1u);
  EXPECT_EQ(sink.records[0]["status"], "failed");
  EXPECT_EQ(shell.exit_code(), 3);
}

TEST(WorkloadRun, InTheTableFormatSkipAndFailAreConsoleLines) {
  Sink sink;
  WorkloadRun shell(sink.request(false), Json::object(), local_environment());
  testing::internal::CaptureStdout();
  shell.skip("MPI has no 16-bit type");
  shell.fail("no GPU");
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "# skipped: MPI has no 16-bit type\n# failed: no GPU\n");
  EXPECT_TRUE(sink.records.empty());
  EXPECT_EQ(shell.exit_code(), 3);
}

TEST(WorkloadRun, EmitSendsToTheSinkAndAFailedCheckSetsTheExitCode) {
  Sink sink;
  WorkloadRun shell(sink.request(true), Json::object(), local_environment());
  shell.emit(Json{{"metric", "bw"}});
  EXPECT_EQ(shell.exit_code(), 0);
  shell.note_failed();
  EXPECT_EQ(shell.exit_code(), 3);
  ASSERT_EQ(sink.records.size(), 1u);
  EXPECT_EQ(sink.records[0]["metric"], "bw");
}

}  // namespace
}  // namespace scalebench
