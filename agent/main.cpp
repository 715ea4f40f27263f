// scalebench-agent: one per node; runs what the coordinator assigns on this node's GPUs.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <regex>
#include <sstream>

#include "agent/agent.hpp"
#include "common/bearer_token.hpp"
#include "common/log.hpp"
#include "common/process.hpp"
#include "common/version.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

const char* kUsage = R"(usage: scalebench-agent --coordinator http://HOST:PORT [options]
  --name NAME          agent id (default: the hostname)
  --work-dir DIR       run specs and logs (default /tmp/scalebench-agent-NAME)
  --slots N            ranks this node offers for host-memory runs (default: number of cores)
  --mpirun PATH        the mpirun to use (default: mpirun on PATH)
  --mpirun-arg ARG     an extra mpirun argument (repeatable), e.g. --mpirun-arg=--mca ...
  --run-program PATH   scalebench-run (default: next to this program)
  --token-file FILE    the agent token the coordinator wants (else SCALEBENCH_TOKEN)
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
    else if (a == "--work-dir")
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
    else if (a == "--run-program")
      o.launch.run_program = value();
    else if (a == "--token-file")
      token_file = value();
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
  if (o.work_dir.empty()) o.work_dir = "/tmp/scalebench-agent-" + o.name;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  try {
    Agent agent(o);
    agent.run(g_stop);
    return 0;
  } catch (const std::exception& e) {
    log::error(e.what());
    return 1;
  }
}
