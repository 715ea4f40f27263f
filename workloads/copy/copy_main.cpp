#include "workloads/copy/copy_main.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "record/record.hpp"
#include "topology/discover.hpp"
#include "workloads/copy/copy.hpp"
#include "workloads/copy/copy_bench.hpp"
#include "workloads/copy/copy_report.hpp"
#include "workloads/gpu/mpi_check.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/link_peak.hpp"

namespace scalebench {

namespace {
// The end of the run on every rank. A nonblocking barrier, polled with sleeps, so that ranks
// waiting for rank 0 do not spin on a CPU while it measures.
void finish_together() {
  MPI_Request req;
  MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
  int done = 0;
  while (true) {
    MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The links between the GPUs this process sees, in CUDA's order (the PCI bus ids of `devices`).
Topology visible_topology(const std::vector<DeviceId>& devices) {
  std::vector<std::string> ids;
  for (const DeviceId& d : devices) ids.push_back(d.pci_bus_id);
  return discover_devices(ids);
}

// Adds the path's peak and the share of it reached to a bandwidth record.
void add_peak(const Topology& t, bool peer_access, Json& rec) {
  if (!rec["value"].is_number()) return;
  auto end = [](const Json& e) { return e.is_number_integer() ? e.get<int>() : -1; };
  const bool sum = rec.value("metric", "") == "bandwidth_sum";
  const Json link = copy_path_peak(t, end(rec["params"]["src"]), end(rec["params"]["dst"]), peer_access, sum ? 2 : 1);
  add_link_peak(rec, link, rec.value("metric", ""));
}
}  // namespace

int run_copy_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const Json params = copy::resolved_params(run.spec.at("params"));
  const copy::Config cfg = copy::Config::from_params(params, run.spec.value("repetitions", 20));
  const bool lead = mpi.rank() == 0;

  int gpus = 0;
  std::string no_gpu;
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  if (lead) {
    const cudaError_t rc = cudaGetDeviceCount(&gpus);
    if (rc != cudaSuccess) {
      gpus = 0;
      no_gpu = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc);
    }
    for (int d = 0; d < gpus; ++d) devices.push_back(describe_device(d));
    if (gpus > 0) versions = gpu_versions();
  }
  const RunEnvironment env = capture_environment(mpi, "cuda", devices, versions);
  if (!lead) {
    finish_together();
    return 0;
  }
  Json context = record_context(run.run_id, run.spec, env.placement);
  context["params"] = params;
  context["environment"] = env.environment;
  const Topology topology = gpus > 0 ? visible_topology(devices) : Topology{};
  context["environment"]["topology"] = to_json(topology);

  int exit_code = 0;
  std::string why_not = copy::unsupported(cfg, gpus);
  if (!why_not.empty()) {
    if (!no_gpu.empty()) why_not += " (" + no_gpu + ")";
    const bool failed = gpus == 0;  // no GPU where the placement promised some
    if (run.records)
      run.emit(status_record(context, failed ? "failed" : "skipped", why_not));
    else
      std::fprintf(stdout, "# %s: %s\n", failed ? "failed" : "skipped", why_not.c_str());
    exit_code = failed ? 3 : 0;
  } else {
    copy::CopyBench bench(cfg, gpus);
    std::vector<copy::CaseResult> results;
    for (const copy::Case& cs : copy::plan_cases(cfg, gpus)) {
      copy::CaseResult r = bench.run(cs);
      if (copy::case_failed(r)) exit_code = 3;
      if (run.records)
        for (Json rec : copy::case_records(context, cfg, r)) {
          add_peak(topology, params.value("peer_access", true), rec);
          run.emit(rec);
        }
      results.push_back(std::move(r));
    }
    if (!run.records) copy::print_table(stdout, cfg, gpus, results);
  }
  finish_together();
  return exit_code;
}

}  // namespace scalebench
