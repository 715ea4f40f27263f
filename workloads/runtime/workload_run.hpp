#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {

// The skeleton every workload's run shares, around what it measures: the run's environment and
// the context of its records, the lead rank that reports, a run skipped or failed as a status
// record or a console line, and the exit code (0, or 3 when a point failed or a check found wrong
// data). Its reports go to the RunRequest's record sink; what a workload prints as its table
// stays the workload's.
class WorkloadRun {
 public:
  // On every rank at once (it gathers the ranks' hosts and devices): `params` as the run resolved
  // them, which the records carry; `devices` the GPUs this process drives (none on host memory)
  // and `versions` the stack's, both into the records' environment.
  WorkloadRun(const RunRequest& run, const Json& params, const std::string& backend,
              const std::vector<DeviceId>& devices = {}, const Json& versions = Json::object());
  // A run without an MPI session (the command workload): the environment captured by the caller.
  // This process is the lead.
  WorkloadRun(const RunRequest& run, const Json& params, const RunEnvironment& env);

  // The rank that reports: rank 0, or the only process of a run outside MPI.
  bool lead() const { return lead_; }
  // Records to the sink; else the workload prints a table.
  bool records() const { return run_.records; }
  // What every record of the run starts from (record_context, params, environment); the workload
  // adds what it learns before measuring (topology, transports, link peak).
  Json& context() { return context_; }
  const Json& context() const { return context_; }
  const RunEnvironment& environment() const { return env_; }

  // Sends a record to the sink, from the lead alone.
  void emit(const Json& record) const;
  // The run measures nothing: a "skipped" status record, or "# skipped: why" on the console (lead
  // only); the exit code stays.
  void skip(const std::string& why);
  // The same for a run that cannot run where it should ("failed"); the exit code becomes 3.
  void fail(const std::string& why);
  // A point failed or a check found wrong data: the exit code becomes 3.
  void note_failed() { exit_code_ = 3; }
  int exit_code() const { return exit_code_; }

  // Every rank's `mine`, in rank order, on every rank (each rank's record, gathered to report).
  std::vector<Json> gather(const Json& mine) const;
  // The end of the run on every rank at once: a nonblocking barrier polled with sleeps, so that
  // ranks waiting for the lead do not spin on a CPU while it measures.
  void finish_together() const;

 private:
  void report(const std::string& status, const std::string& why) const;

  RunRequest run_;
  bool lead_ = true;
  RunEnvironment env_;
  Json context_;
  int exit_code_ = 0;
};

}  // namespace scalebench
