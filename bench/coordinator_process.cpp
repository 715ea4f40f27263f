#include "bench/coordinator_process.hpp"

#include <signal.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/interrupt.hpp"

namespace scalebench::load {

namespace {
// The last `n` lines of a file, each indented, for an error message.
std::string last_lines(const std::filesystem::path& file, std::size_t n) {
  std::ifstream in(file);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > n) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return lines.empty() ? " (its log is empty)" : out;
}
}  // namespace

CoordinatorProcess::CoordinatorProcess(CoordinatorConfig config) : config_(std::move(config)) { start(0); }

CoordinatorProcess::CoordinatorProcess(const std::string& url, pid_t pid) : url_(url), pid_(pid) {
  if (url.rfind("http://127.0.0.1:", 0) != 0) throw Error("--coordinator must be http://127.0.0.1:PORT (loopback)");
}

CoordinatorProcess::~CoordinatorProcess() {
  if (process_) process_->terminate_group(std::chrono::seconds(10));
}

void CoordinatorProcess::start(int port) {
  const auto log = config_.folder / "coordinator.log";
  const auto port_file = config_.folder / "port";
  std::filesystem::remove(port_file);
  ChildProcess::Options copts;
  copts.output_file = log.string();
  copts.kill_with_parent = true;  // this program killed outright (SIGKILL): the coordinator goes too
  std::vector<std::string> argv{executable_dir() + "/scalebench-coordinator",
                                "--port",
                                std::to_string(port),
                                "--port-file",
                                port_file.string(),
                                "--db",
                                config_.db,
                                "--heartbeat-interval",
                                std::to_string(config_.heartbeat_interval_s),
                                "--heartbeat-timeout",
                                std::to_string(config_.heartbeat_timeout_s)};
  if (config_.threads > 0) {
    argv.push_back("--threads");
    argv.push_back(std::to_string(config_.threads));
  }
  argv.insert(argv.end(), config_.args.begin(), config_.args.end());
  if (!config_.cpus.empty()) argv.insert(argv.begin(), {"taskset", "-c", config_.cpus});
  process_ = ChildProcess::spawn(argv, copts);
  pid_ = process_->pid();
  port_ = 0;
  std::optional<int> exited;
  for (int i = 0; i < 400 && port_ == 0 && !(exited = process_->try_wait()) && !interrupted(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream pf(port_file);
    pf >> port_;
  }
  if (interrupted()) return;  // the caller ends the run (and this coordinator) at its next check
  if (port_ == 0) {
    const std::string how = exited ? "it exited with status " + std::to_string(*exited) : "no port within 20 s";
    throw Error("the coordinator did not start (" + how + "); the last lines of its log:" + last_lines(log, 15));
  }
  url_ = "http://127.0.0.1:" + std::to_string(port_);
}

void CoordinatorProcess::restart(int signal) {
  if (!process_) throw Error("only a coordinator started here can be restarted");
  if (signal == SIGKILL) {
    kill(-pid_, SIGKILL);
    process_->wait();
  } else {
    process_->terminate_group(std::chrono::seconds(30));
  }
  const int port = port_;
  start(port);
}

bool CoordinatorProcess::running() { return !process_ || !process_->try_wait(); }

}  // namespace scalebench::load
