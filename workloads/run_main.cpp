// scalebench-run: one process per GPU (or per rank on host memory), started by mpirun or srun.
// Runs one workload and reports each measured point as it completes.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "common/process.hpp"
#include "common/record.hpp"
#include "common/sweep.hpp"
#include "common/version.hpp"
#include "common/workload_schema.hpp"
#include "topology/discover.hpp"
#include "workloads/bootstrap/host_binding.hpp"
#include "workloads/bootstrap/mpi_session.hpp"
#include "workloads/collective/mpi_backend.hpp"
#include "workloads/collective/nccl_transport.hpp"
#include "workloads/collective/report.hpp"
#include "workloads/collective/runner.hpp"
#include "workloads/command/command_main.hpp"
#include "workloads/environment.hpp"
#include "workloads/link_peak.hpp"
#ifdef SCALEBENCH_HAVE_CUDA
#include "workloads/collective/nccl_backend.hpp"
#include "workloads/conv/conv_main.hpp"
#include "workloads/copy/copy_main.hpp"
#include "workloads/gemm/gemm_main.hpp"
#include "workloads/rnn/rnn_main.hpp"
#include "workloads/train/train_main.hpp"
#endif

namespace {
using namespace scalebench;

const char* kUsage =
    R"(usage: mpirun -np N scalebench-run WORKLOAD [-p KEY=VALUE]... [--repetitions N] [--emit table|records]
       mpirun -np N scalebench-run --spec RUN.json [--emit records]
       scalebench-run --spec RUN.json [--mpirun PATH] [--mpirun-arg ARG]... [--allow-run-as-root]
                                       (a command workload's run: starts its program itself)
       mpirun -np N scalebench-run --spec-env VAR [--emit records]
                                       (the run file's JSON in variable VAR: runs over several nodes)
       scalebench-run --capabilities
       scalebench-run --topology       this node's GPUs and the links between them
Workloads and their parameters are listed in docs/experiments.md (e.g. collective -p op=all_reduce
-p backend=nccl -p min_bytes=8 -p max_bytes=1GiB). --emit records prints one JSON record per line.
)";

constexpr const char* kRecordPrefix = "@@SCALEBENCH_RECORD ";

struct Invocation {
  long long run_id = 0;
  Json run_file;  // the whole --spec file (run_id, attempt, spec, hosts)
  Json spec;      // RunSpec as JSON
  bool records = false;
  MpirunOptions mpirun;  // how the command workload starts MPI programs (from the agent)
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "scalebench-run: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

Invocation parse_args(int argc, char** argv) {
  Invocation inv;
  std::string workload, spec_file, spec_env;
  Json params = Json::object();
  int repetitions = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--spec")
      spec_file = value();
    else if (a == "--spec-env")
      spec_env = value();
    else if (a == "--mpirun")
      inv.mpirun.mpirun = value();
    else if (a == "--mpirun-arg")
      inv.mpirun.args.push_back(value());
    else if (a == "--allow-run-as-root")
      inv.mpirun.as_root = true;
    else if (a == "--emit") {
      std::string e = value();
      if (e != "table" && e != "records") usage_error("--emit takes table or records");
      inv.records = e == "records";
    } else if (a == "--repetitions") {
      try {
        repetitions = std::stoi(value());
      } catch (const std::exception&) {
        usage_error("--repetitions needs a positive integer");
      }
      if (repetitions < 1) usage_error("--repetitions needs a positive integer");
    } else if (a == "-p") {
      std::string kv = value();
      auto eq = kv.find('=');
      if (eq == std::string::npos) usage_error("-p takes KEY=VALUE, got '" + kv + "'");
      params[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (!a.empty() && a[0] != '-' && workload.empty())
      workload = a;
    else
      usage_error("unknown argument '" + a + "'");
  }
  if (!spec_file.empty() || !spec_env.empty()) {
    Json j;
    try {
      if (!spec_env.empty()) {
        // A run over several nodes: the run file comes through mpirun (it is not on this node).
        const char* text = std::getenv(spec_env.c_str());
        if (!text) usage_error("--spec-env: " + spec_env + " is not set");
        j = Json::parse(text);
      } else {
        std::ifstream in(spec_file);
        if (!in) usage_error("cannot read " + spec_file);
        j = Json::parse(in);
      }
    } catch (const Json::exception& e) {
      usage_error((spec_env.empty() ? spec_file : spec_env) + ": not a run spec: " + e.what());
    }
    inv.run_id = j.value("run_id", 0LL);
    inv.spec = j.at("spec");
    inv.run_file = j;
    return inv;
  }
  if (workload.empty()) usage_error("name a workload or give --spec");
  if (workload == "command") usage_error("the command workload runs from a run spec (--spec); see docs/command.md");
  const WorkloadDef* def = find_workload(workload);
  if (!def) usage_error("unknown workload '" + workload + "'");
  RunSpec r;
  r.experiment = "adhoc";
  r.workload = workload;
  for (const auto& p : def->params) r.params[p.name] = p.default_value;
  for (const auto& [k, v] : params.items()) {
    const ParamDef* p = def->find(k);
    if (!p) usage_error("unknown parameter '" + k + "' of workload " + workload);
    ParamValue pv = parse_param(*p, v.get<std::string>());
    if (!pv.error.empty()) usage_error("-p " + k + ": " + pv.error);
    r.params[k] = pv.value;
  }
  std::string cross = check_param_set(*def, r.params);
  if (!cross.empty()) usage_error(cross);
  r.repetitions = repetitions;
  inv.spec = to_json(r);
  return inv;
}

void emit(const Json& record) {
  std::printf("%s%s\n", kRecordPrefix, record.dump().c_str());
  std::fflush(stdout);
}

int run_collective(const MpiSession& mpi, const Invocation& inv) {
  Json params = inv.spec.at("params");
  std::string backend_name = params.value("backend", "auto");
  if (backend_name == "auto") backend_name = "mpi";
  params["backend"] = backend_name;
  collective::Config cfg = collective::Config::from_params(params, inv.spec.value("repetitions", 20));

  std::unique_ptr<collective::Backend> backend;
  std::vector<std::string> devices;
  Json versions = Json::object();
  std::optional<collective::NcclLog> nccl_log;
  if (backend_name == "nccl") {
#ifdef SCALEBENCH_HAVE_CUDA
    nccl_log.emplace();  // before the communicator exists, so NCCL logs its connections to us
    auto nccl = std::make_unique<collective::NcclBackend>(mpi, cfg.gpus_per_process);
    for (int d : nccl->devices()) devices.push_back(collective::describe_device(d));
    versions = collective::gpu_versions();
    backend = std::move(nccl);
#else
    throw Error("this scalebench-run was built without CUDA/NCCL (SCALEBENCH_CUDA=OFF or not found)");
#endif
  } else {
    backend = std::make_unique<collective::MpiBackend>(mpi);
  }
  RunEnvironment env = capture_environment(mpi, backend_name, devices, versions);
  Json context = record_context(inv.run_id, inv.spec, env.placement);
  context["params"] = params;
  context["environment"] = env.environment;
  const bool lead = mpi.rank() == 0;
  const std::string transport = inv.spec.value("transport", std::string());

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
    transport_problem = collective::transport_mismatch(transports.get<std::map<std::string, int>>(),
                                                       inv.spec.value("env", Json::object()),
                                                       inv.spec.value("transport", std::string()));
  }

  Json link = nccl_log
                  ? path_peak(topology, context["environment"]["nccl_transports"].get<std::map<std::string, int>>())
                  : Json();
  if (!link.is_null()) context["link"] = link;
  std::string why_not = topology_skip.empty() ? backend->unsupported(cfg) : topology_skip;
  if (!why_not.empty()) {
    if (lead) {
      if (inv.records)
        emit(status_record(context, "skipped", why_not));
      else
        std::fprintf(stdout, "# skipped: %s\n", why_not.c_str());
    }
    return 0;
  }
  const int nranks = backend->nranks();
  if (lead && !inv.records) {
    collective::print_table_header(stdout, cfg, nranks);
    // What the records carry as environment.nccl_transports, so that a table says it too.
    const Json t = context["environment"].value("nccl_transports", Json::object());
    if (!t.empty())
      std::fprintf(stdout, "# NCCL connected (its log): %s\n",
                   collective::describe_transports(t.get<std::map<std::string, int>>()).c_str());
  }
  long long wrong_total = 0;
  collective::run_sweep(*backend, cfg, mpi, [&](const collective::PointResult& p) {
    if (p.wrong > 0) wrong_total += p.wrong;
    if (!lead) return;
    if (inv.records)
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
}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--topology") {
      const Topology t = discover_topology();
      std::printf("%s\n%s\n", render_matrix(t).c_str(), to_json(t).dump().c_str());
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--capabilities") {
      Json caps{{"workloads", {"collective", "command"}}, {"backends", {"mpi"}}, {"version", kVersion}};
#ifdef SCALEBENCH_HAVE_CUDA
      caps["backends"].push_back("nccl");
      caps["workloads"].push_back("copy");
      caps["workloads"].push_back("gemm");
      caps["workloads"].push_back("rnn");
      caps["workloads"].push_back("conv");
      caps["workloads"].push_back("train");
#endif
      std::puts(caps.dump().c_str());
      return 0;
    }
  for (int i = 1; i + 2 < argc; ++i)
    if (std::string(argv[i]) == "--exec-on-host") {
      // A command workload's rank over several nodes: take this rank's host GPUs from the run
      // file, then become the program (same pid, so mpirun signals it directly).
      if (std::string(argv[i + 2]) != "--" || i + 3 >= argc) usage_error("--exec-on-host VAR -- PROGRAM [ARGS...]");
      try {
        const char* text = std::getenv(argv[i + 1]);
        if (!text) throw Error(std::string(argv[i + 1]) + " is not set");
        apply_host_binding(Json::parse(text));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "scalebench-run: --exec-on-host: %s\n", e.what());
        return 1;
      }
      execvp(argv[i + 3], argv + i + 3);
      std::fprintf(stderr, "scalebench-run: cannot run %s: %s\n", argv[i + 3], std::strerror(errno));
      return 127;
    }
  Invocation inv = parse_args(argc, argv);
  if (inv.spec.value("workload", "") == "command") {
    if (inv.run_file.is_object() && inv.run_file.value("hosts", Json::array()).size() > 1) {
      // Over several nodes each rank must see its own host's GPUs: through this program.
      setenv("SCALEBENCH_RUN_FILE", inv.run_file.dump().c_str(), 1);
      inv.mpirun.rank_prefix = {executable_dir() + "/scalebench-run", "--exec-on-host", "SCALEBENCH_RUN_FILE", "--"};
      inv.mpirun.args.insert(inv.mpirun.args.end(), {"-x", "SCALEBENCH_RUN_FILE"});
    }
    // Outside MPI: the program is the MPI job (or torchrun's ranks), started from here.
    try {
      return run_command_workload(inv.run_id, inv.spec, inv.mpirun, emit);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "scalebench-run: error: %s\n", e.what());
      return 1;
    }
  }
  try {
    apply_host_binding(inv.run_file);  // before MPI and CUDA start: the rank's host and GPUs
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalebench-run: error: %s\n", e.what());
    return 1;
  }
  MpiSession mpi(&argc, &argv);
  try {
    const std::string workload = inv.spec.value("workload", "");
    if (workload == "collective") return run_collective(mpi, inv);
    if (workload == "copy") {
#ifdef SCALEBENCH_HAVE_CUDA
      return run_copy_workload(mpi, inv.run_id, inv.spec, inv.records, emit);
#else
      throw Error("the copy workload needs CUDA; this scalebench-run was built without it");
#endif
    }
    if (workload == "gemm") {
#ifdef SCALEBENCH_HAVE_CUDA
      return run_gemm_workload(mpi, inv.run_id, inv.spec, inv.records, emit);
#else
      throw Error("the gemm workload needs CUDA; this scalebench-run was built without it");
#endif
    }
    if (workload == "rnn") {
#ifdef SCALEBENCH_HAVE_CUDA
      return run_rnn_workload(mpi, inv.run_id, inv.spec, inv.records, emit);
#else
      throw Error("the rnn workload needs CUDA and cuDNN; this scalebench-run was built without them");
#endif
    }
    if (workload == "conv") {
#ifdef SCALEBENCH_HAVE_CUDA
      return run_conv_workload(mpi, inv.run_id, inv.spec, inv.records, emit);
#else
      throw Error("the conv workload needs CUDA and cuDNN; this scalebench-run was built without them");
#endif
    }
    if (workload == "train") {
#ifdef SCALEBENCH_HAVE_CUDA
      return run_train_workload(mpi, inv.run_id, inv.spec, inv.records, emit);
#else
      throw Error("the train workload needs CUDA, cuDNN and NCCL; this scalebench-run was built without them");
#endif
    }
    throw Error("workload '" + inv.spec.value("workload", std::string()) + "' is not built into this scalebench-run");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalebench-run: rank %d: error: %s\n", mpi.rank(), e.what());
    std::fflush(stderr);
    mpi.abort(1);  // the other ranks would otherwise wait forever in the next collective
  }
}
