#pragma once
#include <string>
#include <vector>

namespace scalebench {

// How this node runs MPI jobs (the agent's own mpirun settings, passed on).
struct MpirunOptions {
  std::string mpirun = "mpirun";
  std::vector<std::string> args;  // site options
  bool as_root = false;
  // Put before the program on every rank (launch mpi): over several nodes, scalebench-run's
  // --exec-on-host, which sets the rank's host GPUs and then becomes the program.
  std::vector<std::string> rank_prefix;
};

}  // namespace scalebench
