// scalebench-run: one process per GPU (or per rank on host memory), started by mpirun or srun.
// Runs one workload and reports each measured point as it completes.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "catalog/registry.hpp"
#include "catalog/workload_help.hpp"
#include "catalog/workload_schema.hpp"
#include "common/cpu_binding.hpp"
#include "common/error.hpp"
#include "common/program_options.hpp"
#include "common/version.hpp"
#include "experiment/sweep.hpp"
#include "record/record.hpp"
#include "topology/discover.hpp"
#include "workloads/runtime/host_binding.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"

namespace scalebench {
// Each workload's entry point (defined in its folder), declared from the registry's list.
#define SCALEBENCH_WORKLOAD(name, build) int run_##name##_workload(const RunRequest& run);
#include "catalog/workload_list.inc"
#undef SCALEBENCH_WORKLOAD
}  // namespace scalebench

namespace {
using namespace scalebench;

const char* kUsage =
    R"(Forms:
       mpirun -np N scalebench-run WORKLOAD [-p KEY=VALUE]... [--repetitions N] [--format table|records|json]
       mpirun -np N scalebench-run --spec RUN.json [--format records]
       scalebench-run --spec RUN.json [--mpirun PATH] [--mpirun-arg ARG]... [--allow-run-as-root]
                                       (a command workload's run: starts its program itself)
       mpirun -np N scalebench-run --spec-env VAR [--format records]
                                       (the run file's JSON in variable VAR: runs over several nodes)
       scalebench-run --list           the workloads; scalebench-run WORKLOAD --help: its parameters
       scalebench-run --capabilities | --topology | --version)";

const char* kExamples = R"(Examples:
  mpirun -np 2 scalebench-run collective -p op=all_gather -p max_bytes=256MiB
  mpirun -np 8 scalebench-run collective -b 8 -e 128M -f 2 -g 1 -n 20 -w 5   (nccl-tests' flags)
  scalebench-run gemm -p precision=bf16 --format json
  scalebench-run collective --help
--format records prints one record per line after @@SCALEBENCH_RECORD, as the agent reads them;
json prints the records alone, one a line. Exit codes: 0 ok; 1 the workload failed; 2 bad usage.)";

// What the agent looks for before each record; --format json prints the records alone.
const char* g_record_prefix = kRecordLinePrefix;

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
#include "catalog/workload_list.inc"
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
  std::fprintf(stderr, "scalebench-run: %s\nscalebench-run: see scalebench-run --help\n", msg.c_str());
  std::exit(2);
}

bool built_in(const std::string& name) { return find_entry(name) != nullptr; }

// The short flags every workload declares (WorkloadDef::short_flags), each once: a flag sets the
// parameter of the workload being run that declares it.
std::vector<std::string> short_flag_names() {
  std::vector<std::string> flags;
  for (const auto& def : workload_defs())
    for (const auto& f : def.short_flags)
      if (std::find(flags.begin(), flags.end(), f.flag) == flags.end()) flags.push_back(f.flag);
  return flags;
}

// "collective: nccl-tests' minbytes (-p min_bytes)", one part per workload that declares `flag`.
std::string short_flag_help(const std::string& flag) {
  std::string help;
  for (const auto& def : workload_defs())
    if (const ShortFlag* f = def.find_short_flag(flag))
      help += (help.empty() ? "" : "; ") + def.name + ": " + f->help + " (-p " + f->param + ")";
  return help;
}

// "the collective workload", "the a, b workloads": those that declare `flag`.
std::string workloads_with_flag(const std::string& flag) {
  std::string names;
  int n = 0;
  for (const auto& def : workload_defs())
    if (def.find_short_flag(flag)) names += (n++ ? ", " : "") + def.name;
  return "the " + names + (n > 1 ? " workloads" : " workload");
}

// Where the command line lands before it becomes a run.
struct CommandLine {
  std::string workload, spec_file, spec_env, format = "table";
  std::vector<std::string> params;                 // KEY=VALUE
  std::map<std::string, std::string> short_flags;  // flag -> value
  int repetitions = 20;
};

void declare_options(CLI::App& app, CommandLine& c, Invocation& inv) {
  app.footer(std::string(kUsage) + "\n\n" + kExamples);
  add_standard_options(app, "scalebench-run");
  app.add_option("WORKLOAD", c.workload, "the workload to run (scalebench-run --list)");
  app.add_option("-p", c.params, "a parameter of the workload, KEY=VALUE (repeatable; WORKLOAD --help lists them)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  app.add_option("--repetitions", c.repetitions, "timed repetitions of each point")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  auto formats = CLI::IsMember({"table", "records", "json"});
  app.add_option("--format", c.format, "table, records (for the agent) or json")->check(formats)->type_name("FORMAT");
  app.add_option("--emit", c.format, "the same as --format")->check(formats)->type_name("FORMAT");
  app.add_option("--spec", c.spec_file, "run the run file of an experiment's run")->type_name("RUN.json");
  app.add_option("--spec-env", c.spec_env, "the run file's JSON is in this variable")->type_name("VAR");
  app.add_option("--mpirun", inv.mpirun.mpirun, "the mpirun a command workload's run starts")->type_name("PATH");
  app.add_option("--mpirun-arg", inv.mpirun.args, "an extra mpirun argument (repeatable)")
      ->type_name("ARG")
      ->allow_extra_args(false);
  app.add_flag("--allow-run-as-root", inv.mpirun.as_root, "pass --allow-run-as-root to that mpirun");
  app.add_flag("--capabilities")->description("print the workloads and backends built in, as JSON");
  app.add_flag("--topology")->description("print this node's GPUs and the links between them");
  for (const std::string& flag : short_flag_names())
    app.add_option(flag, c.short_flags[flag], short_flag_help(flag))
        ->type_name("V")
        ->group("Workloads' short flags (WORKLOAD --help lists a workload's)");
}

Invocation parse_args(int argc, char** argv) {
  Invocation inv;
  CommandLine c;
  CLI::App app(
      "scalebench-run: one process per GPU (or per rank on host memory), started by mpirun or srun; runs\n"
      "one workload and reports each measured point as it completes.",
      "scalebench-run");
  declare_options(app, c, inv);
  bool list = false;
  app.add_flag("--list", list, "list the workloads");
  try {
    app.parse(parse_arguments(argc, argv, {"--mpirun-arg"}));
  } catch (const CLI::CallForHelp&) {
    // WORKLOAD --help: that workload's parameters, as nvbandwidth --list shows its tests.
    if (const WorkloadDef* def = find_workload(c.workload)) {
      std::fputs(workload_help(*def).c_str(), stdout);
      if (!built_in(def->name)) std::puts("(not built into this scalebench-run)");
      std::exit(0);
    }
    std::exit(app.exit(CLI::CallForHelp()));
  } catch (const CLI::ParseError& e) {
    std::exit(parse_failure(app, e, "scalebench-run"));
  }
  if (list) {
    std::fputs(workload_list(built_in).c_str(), stdout);
    std::exit(0);
  }
  inv.records = c.format != "table";
  if (c.format == "json") g_record_prefix = "";
  const std::string& spec_file = c.spec_file;
  const std::string& spec_env = c.spec_env;
  const std::string& workload = c.workload;
  Json params = Json::object();
  for (const auto& kv : c.params) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) usage_error("-p takes KEY=VALUE, got '" + kv + "'");
    params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const WorkloadDef* flagged = find_workload(workload);
  for (const auto& [flag, value] : c.short_flags) {
    if (!app.get_option(flag)->count()) continue;
    const ShortFlag* f = flagged ? flagged->find_short_flag(flag) : nullptr;
    if (!f) usage_error(flag + " applies to " + workloads_with_flag(flag) + " only");
    // Which one wins would depend on the order of our parsing, not the user's: say so instead.
    if (params.contains(f->param))
      usage_error(flag + " and -p " + f->param + " both set " + f->param + "; give one of them");
    params[f->param] = value;
  }
  const int repetitions = c.repetitions;
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
    r.params[def->current_name(k)] = pv.value;
  }
  std::string cross = check_param_set(*def, r.params);
  if (!cross.empty()) usage_error(cross);
  r.repetitions = repetitions;
  inv.spec = to_json(r);
  return inv;
}

void emit(const Json& record) {
  std::printf("%s%s\n", g_record_prefix, record.dump().c_str());
  std::fflush(stdout);
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
    // Before MPI and CUDA start: the rank's host and GPUs, then the CPUs of its GPU's NUMA node
    // (on one node the agent's choice; over several, read from this rank's own host).
    if (const auto host = apply_host_binding(inv.run_file)) {
      const std::string spec = host_cpu_binding(*host, inv.spec.value("ranks_per_node", 1));
      if (!spec.empty()) setenv(kCpuBindingVariable, spec.c_str(), 1);
    }
    apply_cpu_binding_from_environment();
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
