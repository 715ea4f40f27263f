// scalebench-agent: one per node; runs what the coordinator assigns on this node's GPUs.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>

#include "agent/active_runs.hpp"
#include "agent/agent.hpp"
#include "agent/gpu_telemetry.hpp"
#include "agent/launcher_choice.hpp"
#include "agent/metrics_endpoint.hpp"
#include "common/build_info.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process.hpp"
#include "common/program_options.hpp"
#include "http/bearer_token.hpp"

namespace {
using namespace scalebench;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "scalebench-agent: " << msg << "\nscalebench-agent: see scalebench-agent --help\n";
  std::exit(2);
}

// What the command line sets: the agent's options, and around them the token, the launcher's
// name, the metrics endpoint and its telemetry.
struct CommandLine {
  Agent::Options agent;
  std::string host;  // this node's hostname
  std::string token_file;
  std::string launcher = "auto";
  std::string cpu_binding = "numa";
  int metrics_port = 0;
  CLI::Option* metrics_port_option = nullptr;  // given: serve /metrics
  std::string metrics_address = "127.0.0.1", metrics_port_file;
  double telemetry_interval_s = 1;
  CLI::Option* telemetry_interval_option = nullptr;
  std::string job_mapping_dir;
  GpuTelemetry::Options telemetry;
};

// The defaults that depend on this node: its hostname, its cores, the user and where this program is.
CommandLine node_defaults() {
  CommandLine c;
  if (const char* lib = std::getenv("SCALEBENCH_NVML_LIBRARY"); lib && *lib) c.telemetry.nvml_library = lib;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  c.host = host;
  c.agent.name = host;
  c.agent.slots = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  c.agent.launch.run_program = executable_dir() + "/scalebench-run";
  c.agent.launch.as_root = geteuid() == 0;
  return c;
}

// Every option of the command line, bound to `c`.
void add_options(CLI::App& app, CommandLine& c) {
  Agent::Options& o = c.agent;
  app.add_option("--coordinator", o.coordinator_url, "the coordinator, http[s]://HOST:PORT[/PREFIX]")
      ->required()
      ->type_name("URL");
  app.add_option("--name", o.name, "agent id (default: the hostname)")->type_name("NAME");
  app.add_option("--address", o.address,
                 "the name or address mpirun on other nodes reaches this node by; it goes into the hostfiles of "
                 "runs over several nodes (default: the hostname)")
      ->type_name("HOST")
      // It becomes a hostfile line: one token of host-name characters.
      ->check(CLI::Validator(
          [](std::string& v) {
            return std::regex_match(v, std::regex("[A-Za-z0-9_.:-]{1,253}")) ? "" : "use a host name or IP address";
          },
          ""));
  app.add_option("--work-dir", o.work_dir,
                 "run specs, logs and the journal of undelivered results (outbox.jsonl); one agent per folder "
                 "(default /tmp/scalebench-agent-NAME)")
      ->type_name("DIR");
  app.add_option("--slots", o.slots, "ranks this node offers for host-memory runs (default: number of cores)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--launcher", c.launcher,
                 "how runs start their ranks: mpirun, srun (a job step inside this SLURM allocation), local "
                 "(one-rank runs, no MPI launcher) or auto (srun when SLURM_JOB_ID is set, else mpirun)")
      ->capture_default_str()
      ->type_name("L");
  app.add_option("--mpirun", o.launch.mpirun, "the mpirun to use (default: mpirun on PATH)")->type_name("PATH");
  app.add_option("--mpirun-arg", o.launch.extra_args, "an extra mpirun argument (repeatable), e.g. --mpirun-arg=--mca")
      ->type_name("ARG")
      ->allow_extra_args(false);
  app.add_option("--srun", o.launch.srun, "the srun to use (default: srun on PATH)")->type_name("PATH");
  app.add_option("--srun-mpi", o.launch.srun_mpi, "srun's --mpi plugin (`srun --mpi=list` shows the site's)")
      ->capture_default_str()
      ->type_name("PLUGIN");
  app.add_option("--srun-arg", o.launch.srun_extra_args,
                 "an extra srun argument (repeatable), e.g. --srun-arg=--partition=gpu")
      ->type_name("ARG")
      ->allow_extra_args(false);
  app.add_option("--cpu-binding", c.cpu_binding,
                 "numa: bind each rank of a GPU run to the CPUs and memory of its GPU's NUMA node (a one-node run "
                 "under srun with --cpu-bind/--mem-bind=map_ldom; otherwise each rank binds itself before MPI "
                 "starts, on other nodes by the NUMA nodes their agents reported); none: bind nothing. Every "
                 "record keeps the binding its ranks had (environment.binding)")
      ->capture_default_str()
      ->check(CLI::IsMember({"numa", "none"}))
      ->type_name("MODE");
  app.add_option("--run-program", o.launch.run_program, "scalebench-run (default: next to this program)")
      ->type_name("PATH");
  app.add_option("--token-file", c.token_file, "the agent token the coordinator wants (else SCALEBENCH_TOKEN)")
      ->type_name("FILE");
  app.add_option("--ca-file", o.ca_file,
                 "an https:// coordinator's certificate must chain to this PEM file (else SCALEBENCH_CA_FILE, else "
                 "the system's trusted certificates)")
      ->type_name("FILE");
  c.metrics_port_option =
      app.add_option("--metrics-port", c.metrics_port,
                     "serve GPU telemetry at http://ADDRESS:N/metrics (0 picks a free port; default: no endpoint)")
          ->type_name("N")
          ->check(CLI::Range(0, 65535));
  app.add_option("--metrics-address", c.metrics_address, "address of the metrics endpoint (loopback only by default)")
      ->capture_default_str()
      ->type_name("A");
  app.add_option("--metrics-port-file", c.metrics_port_file, "write the metrics port actually used here once listening")
      ->type_name("FILE");
  c.telemetry_interval_option =
      app.add_option("--telemetry-interval", c.telemetry_interval_s, "seconds between GPU telemetry readings")
          ->capture_default_str()
          ->type_name("S")
          ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--job-mapping-dir", c.job_mapping_dir,
                 "write dcgm-exporter's HPC job mapping here (give dcgm-exporter the same folder as "
                 "--hpc-job-mapping-dir): while a run holds a GPU, a file named after the GPU's index holds the "
                 "run's id, so that DCGM's series carry it as hpc_job (default: no files)")
      ->type_name("DIR");
  app.add_option("--nvml-library", c.telemetry.nvml_library,
                 "the NVML the telemetry reads (default: SCALEBENCH_NVML_LIBRARY, else libnvidia-ml.so.1)")
      ->type_name("PATH");
}

// What the parsed options mean: the checks CLI11 cannot make alone (each a usage error, exit 2)
// and the values that follow from them.
void resolve(CommandLine& c) {
  Agent::Options& o = c.agent;
  o.launch.bind_ranks = c.cpu_binding == "numa";
  if (c.telemetry_interval_option->count())
    c.telemetry.interval = std::chrono::milliseconds(static_cast<long long>(c.telemetry_interval_s * 1000));
  if (o.coordinator_url.empty()) usage_error("--coordinator is required");
  try {
    o.token = client_token(c.token_file).value_or("");
    unsetenv("SCALEBENCH_TOKEN");  // the runs' programs inherit this environment: not the secret
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  if (!std::regex_match(o.name, std::regex("[A-Za-z0-9_.:-]{1,128}")))
    usage_error("--name '" + o.name + "': use 1-128 of A-Z a-z 0-9 _ . : -");
  try {
    o.launch.launcher = choose_launcher(c.launcher, std::getenv("SLURM_JOB_ID"));
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  // The node this agent runs on, as SLURM names it (it may differ from the hostname): registered
  // with the coordinator, so that a leader with the srun launcher can start a run over several
  // nodes as one step across theirs. Outside SLURM there is none (unless runs start with srun).
  if (const char* node = std::getenv("SLURMD_NODENAME"); node && *node)
    o.launch.slurm_node = node;
  else if (o.launch.launcher == Launcher::srun)
    o.launch.slurm_node = c.host;
  if (const char* fence = std::getenv("SLURM_PMIX_FENCE"); fence && *fence) o.launch.srun_pmix_fence.clear();
  if (o.work_dir.empty()) o.work_dir = "/tmp/scalebench-agent-" + o.name;
  if (!c.metrics_port_option->count() && !c.metrics_port_file.empty())
    usage_error("--metrics-port-file needs --metrics-port");
  if (boost::system::error_code ec; boost::asio::ip::make_address(c.metrics_address, ec), ec)
    usage_error("--metrics-address '" + c.metrics_address + "': not an IP address (" + ec.message() + ")");
}

// SIGTERM and SIGINT stop the agent (it tells the coordinator it is stopping); a closed
// connection is an error of its write, not a signal that ends the process.
void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// GPU telemetry on /metrics, only when asked for: without NVML the endpoint still answers,
// with scalebench_agent_gpu_telemetry_available 0. The endpoint goes before the telemetry it reads.
struct MetricsServing {
  std::unique_ptr<GpuTelemetry> telemetry;
  std::unique_ptr<MetricsEndpoint> endpoint;
};

MetricsServing serve_metrics(CommandLine& c, ActiveRuns& active_runs) {
  MetricsServing m;
  if (!c.metrics_port_option->count()) return m;
  c.telemetry.agent = c.agent.name;
  c.telemetry.hostname = c.host;
  m.telemetry = std::make_unique<GpuTelemetry>(c.telemetry);
  m.endpoint = std::make_unique<MetricsEndpoint>(
      c.metrics_address, static_cast<unsigned short>(c.metrics_port), [t = m.telemetry.get(), &active_runs] {
        return build_info_metrics_text("scalebench-agent") + t->metrics_text() + active_runs.metrics_text();
      });
  if (!c.metrics_port_file.empty()) {
    std::string tmp = c.metrics_port_file + ".tmp";
    std::ofstream(tmp) << m.endpoint->port() << "\n";
    if (std::rename(tmp.c_str(), c.metrics_port_file.c_str()) != 0)  // readers never see half a file
      throw Error("cannot write --metrics-port-file " + c.metrics_port_file);
  }
  log::info("metrics on http://" + c.metrics_address + ":" + std::to_string(m.endpoint->port()) + "/metrics" +
            (m.telemetry->available() ? "" : " (no GPU telemetry: " + m.telemetry->unavailable_reason() + ")"));
  return m;
}

void log_launch_setup(const CommandLine& c) {
  const LaunchConfig& launch = c.agent.launch;
  if (!c.job_mapping_dir.empty()) log::info("dcgm-exporter job mapping files in " + c.job_mapping_dir);
  log::info(std::string("runs start with ") + launcher_name(launch.launcher) +
            (launch.launcher == Launcher::srun ? " --mpi=" + launch.srun_mpi + " on SLURM node " + launch.slurm_node
                                               : std::string()));
}

// The command line read into `c` through `app`, which must outlive `c` (c's option pointers are
// into it): nothing when the agent is to go on, else its exit code (0 after --help or --version,
// 2 for bad options).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, CommandLine& c) {
  app.footer(
      "Examples:\n"
      "  scalebench-agent --coordinator http://head:8470 --metrics-port 9470\n"
      "  scalebench-agent --coordinator https://head:8470 --ca-file ca.pem --token-file agent.token\n"
      "  scalebench-agent --coordinator http://head:8470 --launcher srun --srun-arg=--partition=gpu\n"
      "Exit codes: 0 stopped by SIGINT or SIGTERM; 1 failed; 2 bad options.");
  add_standard_options(app, "scalebench-agent");
  add_options(app, c);
  try {
    app.parse(parse_arguments(argc, argv, {"--mpirun-arg", "--srun-arg"}));
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, "scalebench-agent");
  }
  return std::nullopt;
}

// The agent at work until SIGINT or SIGTERM, its /metrics beside it: the exit code (0 when
// stopped by a signal, 1 when it failed).
int serve(CommandLine& c) {
  try {
    ActiveRuns active_runs(c.host, c.job_mapping_dir);
    c.agent.active_runs = &active_runs;
    MetricsServing metrics = serve_metrics(c, active_runs);
    log_launch_setup(c);
    Agent agent(c.agent);
    agent.run(g_stop);
    return 0;
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
}
}  // namespace

int main(int argc, char** argv) {
  log::set_component("agent");
  CommandLine c = node_defaults();
  CLI::App app("scalebench-agent: one per node; runs what the coordinator assigns on this node's GPUs.",
               "scalebench-agent");
  if (const std::optional<int> exit_code = parse_command_line(app, argc, argv, c)) return *exit_code;
  resolve(c);
  install_signal_handlers();
  return serve(c);
}
