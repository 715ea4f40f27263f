#include "workloads/collective/collective_main.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "topology/discover.hpp"
#include "workloads/collective/mpi_backend.hpp"
#include "workloads/collective/report.hpp"
#include "workloads/collective/runner.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/link_peak.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/nccl_transport.hpp"
#include "workloads/runtime/workload_run.hpp"
#ifdef SCALEBENCH_HAVE_CUDA
#include "workloads/collective/nccl_backend.hpp"
#include "workloads/runtime/device_description.hpp"
#endif

namespace scalebench {

namespace {
// The backend the run measures with, and what the records say of its GPUs.
struct Measuring {
  std::unique_ptr<collective::Backend> backend;
  std::vector<DeviceId> devices;  // none on host memory
  Json versions = Json::object();
  std::optional<NcclLog> nccl_log;  // NCCL's connections, with the nccl backend

  Measuring(const MpiSession& mpi, const std::string& name, const collective::Config& cfg) {
    if (name == "nccl") {
#ifdef SCALEBENCH_HAVE_CUDA
      nccl_log.emplace();  // before the communicator exists, so NCCL logs its connections to us
      auto nccl = std::make_unique<collective::NcclBackend>(mpi, cfg.gpus_per_process);
      for (int d : nccl->devices()) devices.push_back(describe_device(d));
      versions = gpu_versions();
      backend = std::move(nccl);
#else
      (void)cfg;
      throw Error("this scalebench-run was built without CUDA/NCCL (SCALEBENCH_CUDA=OFF or not found)");
#endif
    } else {
      backend = std::make_unique<collective::MpiBackend>(mpi);
    }
  }
};

// The links between this run's GPUs, read once by the lead into the records' context (`topology`
// there); why the variant's transport cannot run on them (nvlink without NVLink, p2p-pcie where
// NVLink joins them), or "", on every rank alike.
std::string read_topology(WorkloadRun& shell, const MpiSession& mpi, const std::string& transport, Topology& topology) {
  std::string skip;
  if (shell.lead()) {
    topology = placement_topology(shell.environment().placement);
    shell.context()["environment"]["topology"] = to_json(topology);
    skip = transport_unavailable(topology, transport);
  }
  return mpi.all_gather(skip)[0];
}

// Which transports NCCL really connected with, summed over the ranks, into the records' context;
// why they are not what the variant asked for (P2P or SHM off but used anyway), or "".
std::string read_transports(WorkloadRun& shell, const MpiSession& mpi, const NcclLog& log, const Json& spec) {
  Json total = Json::object();
  for (const auto& s : mpi.all_gather(Json(log.transports()).dump())) {
    const Json theirs = Json::parse(s);  // named: items() only refers to it
    for (const auto& [k, v] : theirs.items()) total[k] = total.value(k, 0) + v.get<int>();
  }
  shell.context()["environment"]["nccl_transports"] = total;
  return transport_mismatch(total.get<std::map<std::string, int>>(), spec.value("env", Json::object()),
                            spec.value("transport", std::string()));
}

// The size sweep: each point's records (failed, with the reason, when the transport was not the
// variant's; with the link's peak) or nccl-tests' table rows. Wrong data fails the run.
void measure_sweep(WorkloadRun& shell, const MpiSession& mpi, collective::Backend& backend,
                   const collective::Config& cfg, const std::string& transport_problem, const Json& link) {
  const int nranks = backend.nranks();
  if (shell.lead() && !shell.records()) {
    collective::print_table_header(stdout, cfg, nranks);
    // What the records carry as environment.nccl_transports, so that a table says it too.
    const Json t = shell.context()["environment"].value("nccl_transports", Json::object());
    if (!t.empty())
      std::fprintf(stdout, "# NCCL connected (its log): %s\n",
                   describe_transports(t.get<std::map<std::string, int>>()).c_str());
  }
  collective::run_sweep(backend, cfg, mpi, [&](const collective::PointResult& p) {
    if (p.wrong > 0) shell.note_failed();
    if (!shell.lead()) return;
    if (shell.records())
      for (auto r : collective::point_records(shell.context(), cfg, nranks, p)) {
        if (!transport_problem.empty()) {
          r["status"] = "failed";
          r["reason"] = transport_problem;
        }
        add_link_peak(r, link);
        shell.emit(r);
      }
    else
      collective::print_table_row(stdout, cfg, nranks, p);
  });
}
}  // namespace

// In phases: the backend, the run's shell, the GPUs' links and NCCL's transports into the
// records' context, a skip where the backend or the links cannot run the variant, else the sweep.
int run_collective_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  Json params = run.spec.at("params");
  std::string backend_name = params.value("backend", "auto");
  if (backend_name == "auto") backend_name = "mpi";
  params["backend"] = backend_name;
  const collective::Config cfg = collective::Config::from_params(params, run.spec.value("repetitions", 20));

  const Measuring m(mpi, backend_name, cfg);
  WorkloadRun shell(run, params, backend_name, m.devices, m.versions);
  Topology topology;
  const std::string topology_skip =
      m.devices.empty() ? std::string()
                        : read_topology(shell, mpi, run.spec.value("transport", std::string()), topology);
  const std::string transport_problem = m.nccl_log ? read_transports(shell, mpi, *m.nccl_log, run.spec) : "";
  const Json link =
      m.nccl_log
          ? path_peak(topology, shell.context()["environment"]["nccl_transports"].get<std::map<std::string, int>>())
          : Json();
  if (!link.is_null()) shell.context()["link"] = link;

  if (const std::string why_not = topology_skip.empty() ? m.backend->unsupported(cfg) : topology_skip;
      !why_not.empty()) {
    shell.skip(why_not);
    return shell.exit_code();
  }
  measure_sweep(shell, mpi, *m.backend, cfg, transport_problem, link);
  if (!transport_problem.empty()) {
    if (shell.lead()) std::fprintf(stderr, "scalebench-run: %s\n", transport_problem.c_str());
    shell.note_failed();
  }
  return shell.exit_code();
}

}  // namespace scalebench
