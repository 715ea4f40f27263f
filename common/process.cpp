#include "common/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/error.hpp"

namespace scalebench {

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, const Options& options) {
  if (argv.empty()) throw Error("spawn: empty command");
  int pipefd[2] = {-1, -1};
  if (options.capture_output && pipe2(pipefd, O_CLOEXEC) != 0)
    throw Error(std::string("pipe: ") + std::strerror(errno));
  int file_fd = -1;
  if (!options.capture_output && !options.output_file.empty()) {
    file_fd = open(options.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (file_fd < 0) throw Error(options.output_file + ": " + std::strerror(errno));
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && options.env.count(kv.substr(0, eq))) continue;
    env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    if (options.kill_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(127);  // it died before the request took hold
    }
    int out = options.capture_output ? pipefd[1] : file_fd;
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execvpe(args[0], args.data(), envp.data());
    std::string msg = std::string("cannot run ") + args[0] + ": " + std::strerror(errno) + "\n";
    ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before we might signal it
  ChildProcess c;
  c.pid_ = pid;
  if (options.capture_output) {
    close(pipefd[1]);
    c.out_fd_ = pipefd[0];
  }
  if (file_fd >= 0) close(file_fd);
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), out_fd_(o.out_fd_), exit_code_(o.exit_code_) {
  o.pid_ = -1;
  o.out_fd_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    this->~ChildProcess();
    pid_ = o.pid_;
    out_fd_ = o.out_fd_;
    exit_code_ = o.exit_code_;
    o.pid_ = -1;
    o.out_fd_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) terminate_group(std::chrono::milliseconds(2000));
  if (out_fd_ >= 0) close(out_fd_);
}

static int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::optional<int> ChildProcess::try_wait() {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_code_ = decode_status(status);
  return exit_code_;
}

int ChildProcess::wait() {
  while (!exit_code_ && pid_ > 0) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, 0);
    if (r == pid_)
      exit_code_ = decode_status(status);
    else if (r < 0 && errno != EINTR)
      break;
  }
  return exit_code_.value_or(-1);
}

int ChildProcess::terminate_group(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return -1;
  if (!try_wait()) {
    kill(-pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (!try_wait() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid_, SIGKILL);  // whatever of the group is left (ranks that ignored SIGTERM)
  return wait();
}

std::string executable_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace scalebench
