// The example workload's entry point: scalebench-run calls it on every rank. Every rank measures;
// the lead rank (0) alone reports, every rank's record to the agent when it reads records, else a
// line of text each (ranks that print at once would interleave their lines). WorkloadRun
// (workloads/runtime/workload_run.hpp) is the shell around the measurement that every workload
// shares: keep to it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "catalog/registry.hpp"
#include "record/point_record.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench {

namespace {
// Seconds of each of `iters` copies of `bytes` from one buffer to another.
std::vector<double> time_copies(std::size_t bytes, int iters) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  std::vector<double> seconds;
  for (int i = 0; i < iters; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // The copy checked in full (and so not optimised away): no figure for a wrong one.
  if (std::memcmp(from.data(), to.data(), bytes) != 0) seconds.clear();
  return seconds;
}
}  // namespace

int run_example_workload(const RunRequest& run) {
  const Json params = with_defaults("example", run.spec.at("params"));
  const auto bytes = params.at("bytes").get<std::size_t>();
  const std::vector<double> seconds = time_copies(bytes, params.at("iters").get<int>());

  PointRecord r;
  r.point = Json{{"bytes", bytes}, {"rank", run.mpi->rank()}};
  r.metric = "copy_bandwidth";
  r.unit = "GB/s";
  r.better = "higher";
  for (double s : seconds) r.samples.push_back(bytes / s / 1e9);
  r.stop = "repetitions";
  r.correctness = Correctness::counted(seconds.empty() ? 1 : 0);
  if (seconds.empty()) {
    r.status = "failed";
    r.reason = "the copied bytes differ from the source";
  }

  // The run's shell: its environment (on host memory, no GPUs), its records' context, the lead
  // rank that reports and the exit code.
  WorkloadRun shell(run, run.spec.at("params"), "host");
  if (seconds.empty()) shell.note_failed();
  for (const Json& record : shell.gather(r.to_json(shell.context()))) {
    if (shell.records())
      shell.emit(record);  // the lead's alone
    else if (shell.lead())
      std::printf("rank %d: %zu bytes, %s GB/s\n", record["point"]["rank"].get<int>(), bytes,
                  record["value"].dump().c_str());
  }
  return shell.exit_code();
}

}  // namespace scalebench
