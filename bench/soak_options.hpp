#pragma once
// scalebench-coordinator-soak's command line.
#include <optional>
#include <string>
#include <vector>

namespace scalebench::load {

struct SoakOptions {
  double duration_s = 30 * 60;
  int agents = 2000, gpus = 8;
  double record_rate = 0;  // records/s from all agents together (0: one per agent and second)
  int batch = 50;          // records per POST
  int churn = 0;           // agents leaving, and as many joining, per window (-1 until set: 1% of --agents)
  double window_s = 60;
  double compare_s = 300;  // the spans compared at the start and at the end
  double heartbeat_interval_s = 1, heartbeat_timeout_s = 10;
  std::string restart_signal = "KILL";
  std::string coordinator_cpus;
  std::vector<std::string> coordinator_args;
  bool keep = false;
};

// The options, or the exit code when the program should end here (help, --version, bad usage).
std::optional<int> parse_soak_options(int argc, char** argv, SoakOptions* o);

}  // namespace scalebench::load
