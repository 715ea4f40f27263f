// scalebench-run: one process per GPU (or per rank on host memory), started by mpirun or srun.
// Runs one workload and reports each measured point as it completes.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/error.hpp"
#include "common/record.hpp"
#include "common/sweep.hpp"
#include "common/version.hpp"
#include "common/workload_schema.hpp"
#include "topology/discover.hpp"
#include "workloads/bootstrap/host_binding.hpp"
#include "workloads/bootstrap/mpi_session.hpp"
#include "workloads/registry/registry.hpp"
#include "workloads/run_request.hpp"

namespace scalebench {
// Each workload's entry point (defined in its folder), declared from the registry's list.
#define SCALEBENCH_WORKLOAD(name, build) int run_##name##_workload(const RunRequest& run);
#include "workloads/registry/workload_list.inc"
#undef SCALEBENCH_WORKLOAD
}  // namespace scalebench

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
       scalebench-run --version
       scalebench-run --topology       this node's GPUs and the links between them
Workloads and their parameters are listed in docs/experiments.md (e.g. collective -p op=all_reduce
-p backend=nccl -p min_bytes=8 -p max_bytes=1GiB). --emit records prints one JSON record per line.
)";

constexpr const char* kRecordPrefix = "@@SCALEBENCH_RECORD ";

// The workloads built into this scalebench-run: every HOST line of the registry's list, and the
// CUDA ones when built with CUDA.
struct Entry {
  const char* name;
  int (*run)(const RunRequest&);
};
#define SCALEBENCH_ENTRY_HOST(name) {#name, &run_##name##_workload},
#ifdef SCALEBENCH_HAVE_CUDA
#define SCALEBENCH_ENTRY_CUDA(name) {#name, &run_##name##_workload},
#else
#define SCALEBENCH_ENTRY_CUDA(name)
#endif
#define SCALEBENCH_WORKLOAD(name, build) SCALEBENCH_ENTRY_##build(name)
constexpr Entry kEntries[] = {
#include "workloads/registry/workload_list.inc"
};
#undef SCALEBENCH_WORKLOAD
#undef SCALEBENCH_ENTRY_HOST
#undef SCALEBENCH_ENTRY_CUDA

const Entry* find_entry(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return &e;
  return nullptr;
}

using Invocation = RunRequest;  // as parsed from the command line

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
  const WorkloadDef* def = find_workload(workload);
  if (!def) usage_error("unknown workload '" + workload + "'; expected one of: " + workload_names());
  if (def->outside_mpi)
    usage_error("the " + workload + " workload runs from a run spec (--spec); see docs/" + workload + ".md");
  RunSpec r;
  r.experiment = "adhoc";
  r.workload = workload;
  r.params = with_defaults(*def, Json::object());
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
}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--version") {
      std::printf("scalebench-run %s (%s)\n", kVersion, kGitRevision);
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--topology") {
      const Topology t = discover_topology();
      std::printf("%s\n%s\n", render_matrix(t).c_str(), to_json(t).dump().c_str());
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--capabilities") {
      Json caps{{"workloads", Json::array()}, {"backends", {"mpi"}}, {"version", kVersion}};
      for (const auto& e : kEntries) caps["workloads"].push_back(e.name);
#ifdef SCALEBENCH_HAVE_CUDA
      caps["backends"].push_back("nccl");
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
  inv.emit = emit;
  const std::string workload = inv.spec.value("workload", "");
  const WorkloadDef* def = find_workload(workload);
  const Entry* entry = find_entry(workload);
  if (def && def->outside_mpi) {
    // Outside MPI: the workload's program is the MPI job (or torchrun's ranks), started by it.
    try {
      if (!entry) throw Error("workload '" + workload + "' is not built into this scalebench-run");
      return entry->run(inv);
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
  inv.mpi = &mpi;
  try {
    if (!entry) {
      if (def && def->needs_gpus)
        throw Error("the " + workload + " workload needs CUDA; this scalebench-run was built without it");
      throw Error("workload '" + workload + "' is not built into this scalebench-run");
    }
    return entry->run(inv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalebench-run: rank %d: error: %s\n", mpi.rank(), e.what());
    std::fflush(stderr);
    mpi.abort(1);  // the other ranks would otherwise wait forever in the next collective
  }
}
