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

#include "agent/agent.hpp"
#include "agent/gpu_telemetry.hpp"
#include "agent/launcher_choice.hpp"
#include "agent/metrics_endpoint.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process.hpp"
#include "common/version.hpp"
#include "http/bearer_token.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

const char* kUsage = R"(usage: scalebench-agent --coordinator http[s]://HOST:PORT [options]
  --name NAME          agent id (default: the hostname)
  --address HOST       the name or address mpirun on other nodes reaches this node by; it goes
                       into the hostfiles of runs over several nodes (default: the hostname)
  --work-dir DIR       run specs, logs and the journal of undelivered results (outbox.jsonl);
                       one agent per folder (default /tmp/scalebench-agent-NAME)
  --slots N            ranks this node offers for host-memory runs (default: number of cores)
  --launcher L         how runs start their ranks: mpirun, srun (a job step inside this SLURM
                       allocation), local (one-rank runs, no MPI launcher) or auto (default:
                       srun when SLURM_JOB_ID is set, else mpirun)
  --mpirun PATH        the mpirun to use (default: mpirun on PATH)
  --mpirun-arg ARG     an extra mpirun argument (repeatable), e.g. --mpirun-arg=--mca ...
  --srun PATH          the srun to use (default: srun on PATH)
  --srun-mpi PLUGIN    srun's --mpi plugin (default pmix; `srun --mpi=list` shows the site's)
  --srun-arg ARG       an extra srun argument (repeatable), e.g. --srun-arg=--partition=gpu
  --run-program PATH   scalebench-run (default: next to this program)
  --token-file FILE    the agent token the coordinator wants (else SCALEBENCH_TOKEN)
  --ca-file FILE       an https:// coordinator's certificate must chain to this PEM file (else
                       SCALEBENCH_CA_FILE, else the system's trusted certificates)
  --metrics-port N     serve GPU telemetry at http://ADDRESS:N/metrics (0 picks a free port;
                       default: no endpoint)
  --metrics-address A  address of the metrics endpoint (default 127.0.0.1: loopback only)
  --metrics-port-file FILE  write the metrics port actually used here once listening
  --telemetry-interval S    seconds between GPU telemetry readings (default 1)
  --nvml-library PATH  the NVML the telemetry reads (default: SCALEBENCH_NVML_LIBRARY, else
                       libnvidia-ml.so.1)
  --version
)";
[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "scalebench-agent: " << msg << "\n" << kUsage;
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  log::set_component("agent");
  Agent::Options o;
  std::string token_file;
  std::optional<int> metrics_port;
  std::string metrics_address = "127.0.0.1", metrics_port_file;
  GpuTelemetry::Options telemetry;
  std::string launcher = "auto";
  if (const char* lib = std::getenv("SCALEBENCH_NVML_LIBRARY"); lib && *lib) telemetry.nvml_library = lib;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  o.name = host;
  o.slots = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  o.launch.run_program = executable_dir() + "/scalebench-run";
  o.launch.as_root = geteuid() == 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string inline_value;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (!inline_value.empty()) return inline_value;
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--coordinator")
      o.coordinator_url = value();
    else if (a == "--name")
      o.name = value();
    else if (a == "--address") {
      o.address = value();
      // It becomes a hostfile line: one token of host-name characters.
      if (!std::regex_match(o.address, std::regex("[A-Za-z0-9_.:-]{1,253}")))
        usage_error("--address '" + o.address + "': use a host name or IP address");
    } else if (a == "--work-dir")
      o.work_dir = value();
    else if (a == "--slots") {
      try {
        o.slots = std::stoi(value());
      } catch (const std::exception&) {
        usage_error("--slots needs a positive integer");
      }
      if (o.slots < 1) usage_error("--slots needs a positive integer");
    } else if (a == "--mpirun")
      o.launch.mpirun = value();
    else if (a == "--mpirun-arg")
      o.launch.extra_args.push_back(value());
    else if (a == "--launcher")
      launcher = value();
    else if (a == "--srun")
      o.launch.srun = value();
    else if (a == "--srun-mpi")
      o.launch.srun_mpi = value();
    else if (a == "--srun-arg")
      o.launch.srun_extra_args.push_back(value());
    else if (a == "--run-program")
      o.launch.run_program = value();
    else if (a == "--token-file")
      token_file = value();
    else if (a == "--ca-file")
      o.ca_file = value();
    else if (a == "--metrics-port") {
      std::string v = value();
      std::size_t used = 0;
      try {
        metrics_port = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (!metrics_port || used != v.size() || *metrics_port < 0 || *metrics_port > 65535)
        usage_error("--metrics-port needs a port number 0..65535, got '" + v + "'");
    } else if (a == "--metrics-address")
      metrics_address = value();
    else if (a == "--metrics-port-file")
      metrics_port_file = value();
    else if (a == "--telemetry-interval") {
      std::string v = value();
      double s = 0;
      std::size_t used = 0;
      try {
        s = std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || !(s >= 0.1 && s <= 3600))
        usage_error("--telemetry-interval needs seconds between 0.1 and 3600, got '" + v + "'");
      telemetry.interval = std::chrono::milliseconds(static_cast<long long>(s * 1000));
    } else if (a == "--nvml-library")
      telemetry.nvml_library = value();
    else if (a == "--version") {
      std::cout << "scalebench-agent " << kVersion << " (" << kGitRevision << ")\n";
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else
      usage_error("unknown option " + a);
  }
  if (o.coordinator_url.empty()) usage_error("--coordinator is required");
  try {
    o.token = client_token(token_file).value_or("");
    unsetenv("SCALEBENCH_TOKEN");  // the runs' programs inherit this environment: not the secret
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  if (!std::regex_match(o.name, std::regex("[A-Za-z0-9_.:-]{1,128}")))
    usage_error("--name '" + o.name + "': use 1-128 of A-Z a-z 0-9 _ . : -");
  try {
    o.launch.launcher = choose_launcher(launcher, std::getenv("SLURM_JOB_ID"));
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  if (o.launch.launcher == Launcher::srun) {
    // The node this agent runs on, as SLURM names it (it may differ from the hostname).
    const char* node = std::getenv("SLURMD_NODENAME");
    o.launch.slurm_node = node && *node ? node : host;
  }
  if (o.work_dir.empty()) o.work_dir = "/tmp/scalebench-agent-" + o.name;
  if (!metrics_port && !metrics_port_file.empty()) usage_error("--metrics-port-file needs --metrics-port");
  if (boost::system::error_code ec; boost::asio::ip::make_address(metrics_address, ec), ec)
    usage_error("--metrics-address '" + metrics_address + "': not an IP address (" + ec.message() + ")");
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  try {
    // GPU telemetry on /metrics, only when asked for: without NVML the endpoint still answers,
    // with scalebench_agent_gpu_telemetry_available 0.
    std::unique_ptr<GpuTelemetry> gpu_telemetry;
    std::unique_ptr<MetricsEndpoint> endpoint;
    if (metrics_port) {
      telemetry.agent = o.name;
      telemetry.hostname = host;
      gpu_telemetry = std::make_unique<GpuTelemetry>(telemetry);
      endpoint = std::make_unique<MetricsEndpoint>(metrics_address, static_cast<unsigned short>(*metrics_port),
                                                   [t = gpu_telemetry.get()] { return t->metrics_text(); });
      if (!metrics_port_file.empty()) {
        std::string tmp = metrics_port_file + ".tmp";
        std::ofstream(tmp) << endpoint->port() << "\n";
        if (std::rename(tmp.c_str(), metrics_port_file.c_str()) != 0)  // readers never see half a file
          throw Error("cannot write --metrics-port-file " + metrics_port_file);
      }
      log::info("metrics on http://" + metrics_address + ":" + std::to_string(endpoint->port()) + "/metrics" +
                (gpu_telemetry->available() ? "" : " (no GPU telemetry: " + gpu_telemetry->unavailable_reason() + ")"));
      o.on_run = [t = gpu_telemetry.get()](long long run_id, const std::string& experiment) {
        t->set_run(run_id, experiment);
      };
    }
    log::info(std::string("runs start with ") + launcher_name(o.launch.launcher) +
              (o.launch.launcher == Launcher::srun
                   ? " --mpi=" + o.launch.srun_mpi + " on SLURM node " + o.launch.slurm_node
                   : std::string()));
    Agent agent(o);
    agent.run(g_stop);
    return 0;
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
}
