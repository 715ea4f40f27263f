#pragma once
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace scalebench {

// A child process in a process group of its own, so that it and everything it starts (mpirun
// and its ranks) can be signalled together. Move-only; the destructor kills a group still running.
class ChildProcess {
 public:
  struct Options {
    std::map<std::string, std::string> env;  // added to (or replacing in) this process's environment
    bool capture_output = false;             // stdout+stderr into a pipe read through output_fd()
    std::string output_file;                 // else: append stdout+stderr here ("" keeps ours)
    // SIGTERM to the child when the thread that spawned it dies (the process killed outright):
    // nothing it started outlives it unsupervised.
    bool kill_with_parent = false;
  };
  static ChildProcess spawn(const std::vector<std::string>& argv, const Options& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int output_fd() const { return out_fd_; }
  // Exit code once it has ended (128 + signal number when killed by a signal).
  std::optional<int> try_wait();
  int wait();
  // SIGTERM to the group, SIGKILL after `grace` if anything is left; returns the exit code.
  int terminate_group(std::chrono::milliseconds grace);

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::optional<int> exit_code_;
};

// The folder of the running executable, to find the sibling programs (bin/scalebench-run, ...).
std::string executable_dir();

}  // namespace scalebench
