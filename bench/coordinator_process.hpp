#pragma once
// The coordinator a benchmark plays against: one it starts (in a process group of its own, on a
// store and with a log in the benchmark's folder) or a running one it attaches to.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/process.hpp"

namespace scalebench::load {

struct CoordinatorConfig {
  std::filesystem::path folder;  // its log and port file
  std::string db;
  double heartbeat_interval_s = 1;
  // Generous by default: on a loaded machine a heartbeat may come late, and a lost agent would
  // fail its run and end the stream.
  double heartbeat_timeout_s = 60;
  int threads = 0;                // its --threads (0: its own default)
  std::string cpus;               // taskset's CPU list ("" : anywhere)
  std::vector<std::string> args;  // more of its options, as given (--coordinator-arg)
};

class CoordinatorProcess {
 public:
  // Starts it and waits for its port. A coordinator that does not start throws Error with the last
  // lines of its log (the log itself may be in a folder removed on the way out).
  explicit CoordinatorProcess(CoordinatorConfig config);
  // Attaches to a running one (loopback only): it is not stopped here; RSS and CPU need its pid.
  CoordinatorProcess(const std::string& url, pid_t pid);
  // SIGTERM to a started one's group, SIGKILL after 10 s.
  ~CoordinatorProcess();
  CoordinatorProcess(const CoordinatorProcess&) = delete;
  CoordinatorProcess& operator=(const CoordinatorProcess&) = delete;

  // Ends the started coordinator with `signal` (SIGTERM: a clean stop, waited for; SIGKILL: a
  // crash) and starts it again on the same store and port, as an operator's restart does.
  void restart(int signal);
  // Still running (a started one that has not exited; an attached one: always).
  bool running();

  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  const std::string& db() const { return config_.db; }  // "" when attached
  bool started_here() const { return process_.has_value(); }

 private:
  void start(int port);
  CoordinatorConfig config_;
  std::optional<ChildProcess> process_;
  std::string url_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace scalebench::load
