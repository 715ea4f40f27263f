#include "workloads/copy/copy_main.hpp"

#include <cstdio>

#include "topology/discover.hpp"
#include "workloads/copy/copy.hpp"
#include "workloads/copy/copy_bench.hpp"
#include "workloads/copy/copy_report.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/link_peak.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench {

namespace {
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

// Every case of the plan on the lead's GPUs: its records as each completes, or the table at the end.
void measure_cases(WorkloadRun& shell, const copy::Config& cfg, int gpus, const Topology& topology, bool peer_access) {
  copy::CopyBench bench(cfg, gpus);
  std::vector<copy::CaseResult> results;
  for (const copy::Case& cs : copy::plan_cases(cfg, gpus)) {
    copy::CaseResult r = bench.run(cs);
    if (copy::case_failed(r)) shell.note_failed();
    if (shell.records())
      for (Json rec : copy::case_records(shell.context(), cfg, r)) {
        add_peak(topology, peer_access, rec);
        shell.emit(rec);
      }
    results.push_back(std::move(r));
  }
  if (!shell.records()) copy::print_table(stdout, cfg, gpus, results);
}
}  // namespace

int run_copy_workload(const RunRequest& run) {
  const Json params = copy::resolved_params(run.spec.at("params"));
  const copy::Config cfg = copy::Config::from_params(params, run.spec.value("repetitions", 20));
  const bool lead = run.mpi->rank() == 0;

  // One process drives every GPU: the lead's.
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
  WorkloadRun shell(run, params, "cuda", devices, versions);
  if (lead) {
    const Topology topology = gpus > 0 ? visible_topology(devices) : Topology{};
    shell.context()["environment"]["topology"] = to_json(topology);
    if (std::string why_not = copy::unsupported(cfg, gpus); !why_not.empty()) {
      if (!no_gpu.empty()) why_not += " (" + no_gpu + ")";
      if (gpus == 0)  // no GPU where the placement promised some
        shell.fail(why_not);
      else
        shell.skip(why_not);
    } else {
      measure_cases(shell, cfg, gpus, topology, params.value("peer_access", true));
    }
  }
  shell.finish_together();
  return shell.exit_code();
}

}  // namespace scalebench
