#include "workloads/collective/collective_main.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "record/record.hpp"
#include "topology/discover.hpp"
#include "workloads/collective/mpi_backend.hpp"
#include "workloads/collective/report.hpp"
#include "workloads/collective/runner.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/link_peak.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/nccl_transport.hpp"
#ifdef SCALEBENCH_HAVE_CUDA
#include "workloads/collective/nccl_backend.hpp"
#include "workloads/runtime/device_description.hpp"
#endif

namespace scalebench {

int run_collective_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const auto& emit = run.emit;
  Json params = run.spec.at("params");
  std::string backend_name = params.value("backend", "auto");
  if (backend_name == "auto") backend_name = "mpi";
  params["backend"] = backend_name;
  collective::Config cfg = collective::Config::from_params(params, run.spec.value("repetitions", 20));

  std::unique_ptr<collective::Backend> backend;
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  std::optional<NcclLog> nccl_log;
  if (backend_name == "nccl") {
#ifdef SCALEBENCH_HAVE_CUDA
    nccl_log.emplace();  // before the communicator exists, so NCCL logs its connections to us
    auto nccl = std::make_unique<collective::NcclBackend>(mpi, cfg.gpus_per_process);
    for (int d : nccl->devices()) devices.push_back(describe_device(d));
    versions = gpu_versions();
    backend = std::move(nccl);
#else
    throw Error("this scalebench-run was built without CUDA/NCCL (SCALEBENCH_CUDA=OFF or not found)");
#endif
  } else {
    backend = std::make_unique<collective::MpiBackend>(mpi);
  }
  RunEnvironment env = capture_environment(mpi, backend_name, devices, versions);
  Json context = record_context(run.run_id, run.spec, env.placement);
  context["params"] = params;
  context["environment"] = env.environment;
  const bool lead = mpi.rank() == 0;
  const std::string transport = run.spec.value("transport", std::string());

  // The links between this run's GPUs, read once by the lead, go with every record; a transport
  // these GPUs cannot offer (nvlink without NVLink, p2p-pcie where NVLink joins them) is skipped.
  Topology topology;
  std::string topology_skip;
  if (!devices.empty()) {
    if (lead) {
      topology = placement_topology(env.placement);
      context["environment"]["topology"] = to_json(topology);
      topology_skip = transport_unavailable(topology, transport);
    }
    topology_skip = mpi.all_gather(topology_skip)[0];
  }

  // Which transport NCCL really connected with, summed over ranks; a variant that asked for
  // P2P or SHM off but got it anyway fails every record it writes.
  std::string transport_problem;
  auto read_transports = [&] {
    std::map<std::string, int> mine = nccl_log ? nccl_log->transports() : std::map<std::string, int>{};
    Json total = Json::object();
    for (const auto& s : mpi.all_gather(Json(mine).dump())) {
      const Json theirs = Json::parse(s);  // named: items() only refers to it
      for (const auto& [k, v] : theirs.items()) total[k] = total.value(k, 0) + v.get<int>();
    }
    return total;
  };
  if (nccl_log) {
    Json transports = read_transports();
    context["environment"]["nccl_transports"] = transports;
    transport_problem =
        transport_mismatch(transports.get<std::map<std::string, int>>(), run.spec.value("env", Json::object()),
                           run.spec.value("transport", std::string()));
  }

  Json link = nccl_log
                  ? path_peak(topology, context["environment"]["nccl_transports"].get<std::map<std::string, int>>())
                  : Json();
  if (!link.is_null()) context["link"] = link;
  std::string why_not = topology_skip.empty() ? backend->unsupported(cfg) : topology_skip;
  if (!why_not.empty()) {
    if (lead) {
      if (run.records)
        emit(status_record(context, "skipped", why_not));
      else
        std::fprintf(stdout, "# skipped: %s\n", why_not.c_str());
    }
    return 0;
  }
  const int nranks = backend->nranks();
  if (lead && !run.records) {
    collective::print_table_header(stdout, cfg, nranks);
    // What the records carry as environment.nccl_transports, so that a table says it too.
    const Json t = context["environment"].value("nccl_transports", Json::object());
    if (!t.empty())
      std::fprintf(stdout, "# NCCL connected (its log): %s\n",
                   describe_transports(t.get<std::map<std::string, int>>()).c_str());
  }
  long long wrong_total = 0;
  collective::run_sweep(*backend, cfg, mpi, [&](const collective::PointResult& p) {
    if (p.wrong > 0) wrong_total += p.wrong;
    if (!lead) return;
    if (run.records)
      for (auto r : collective::point_records(context, cfg, nranks, p)) {
        if (!transport_problem.empty()) {
          r["status"] = "failed";
          r["reason"] = transport_problem;
        }
        add_link_peak(r, link);
        emit(r);
      }
    else
      collective::print_table_row(stdout, cfg, nranks, p);
  });
  if (!transport_problem.empty() && lead) std::fprintf(stderr, "scalebench-run: %s\n", transport_problem.c_str());
  return wrong_total > 0 || !transport_problem.empty() ? 3 : 0;
}

}  // namespace scalebench
