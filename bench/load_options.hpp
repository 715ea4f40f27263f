#pragma once
// scalebench-coordinator-load's command line.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace scalebench::load {

struct Options {
  std::vector<int> agents{1000};
  int gpus = 8, batch = 200, record_threads = 2;
  double duration_s = 30, heartbeat_interval_s = 1;
  std::string url, db;
  int threads = 0;
  std::string coordinator_cpus;
  std::vector<std::string> coordinator_args;
  pid_t pid = -1;
  bool keep = false;
};

// The options, or the exit code when the program should end here (help, --version, bad usage).
std::optional<int> parse_options(int argc, char** argv, Options* o);

}  // namespace scalebench::load
