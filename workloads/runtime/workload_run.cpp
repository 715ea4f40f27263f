#include "workloads/runtime/workload_run.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "record/record.hpp"
#include "workloads/gpu/mpi_check.hpp"
#include "workloads/runtime/mpi_session.hpp"

namespace scalebench {

namespace {
Json context_of(const RunRequest& run, const Json& params, const RunEnvironment& env) {
  Json context = record_context(run.run_id, run.spec, env.placement);
  context["params"] = params;
  context["environment"] = env.environment;
  return context;
}
}  // namespace

WorkloadRun::WorkloadRun(const RunRequest& run, const Json& params, const std::string& backend,
                         const std::vector<DeviceId>& devices, const Json& versions)
    : run_(run),
      lead_(run.mpi->rank() == 0),
      env_(capture_environment(*run.mpi, backend, devices, versions)),
      context_(context_of(run, params, env_)) {}

WorkloadRun::WorkloadRun(const RunRequest& run, const Json& params, const RunEnvironment& env)
    : run_(run), lead_(!run.mpi || run.mpi->rank() == 0), env_(env), context_(context_of(run, params, env_)) {}

void WorkloadRun::emit(const Json& record) const {
  if (lead_) run_.emit(record);
}

void WorkloadRun::report(const std::string& status, const std::string& why) const {
  if (!lead_) return;
  if (run_.records) {
    run_.emit(status_record(context_, status, why));
  } else {
    std::fprintf(stdout, "# %s: %s\n", status.c_str(), why.c_str());
    std::fflush(stdout);
  }
}

void WorkloadRun::skip(const std::string& why) { report("skipped", why); }

void WorkloadRun::fail(const std::string& why) {
  report("failed", why);
  exit_code_ = 3;
}

std::vector<Json> WorkloadRun::gather(const Json& mine) const {
  std::vector<Json> all;
  for (const std::string& text : run_.mpi->all_gather(mine.dump())) all.push_back(Json::parse(text));
  return all;
}

void WorkloadRun::finish_together() const {
  MPI_Request req;
  MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
  int done = 0;
  while (true) {
    MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace scalebench
