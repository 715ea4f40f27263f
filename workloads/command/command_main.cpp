#include "workloads/command/command_main.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "common/error.hpp"
#include "common/process.hpp"
#include "record/record.hpp"
#include "topology/discover.hpp"
#include "workloads/command/figures.hpp"
#include "workloads/command/mllog_records.hpp"
#include "workloads/command/nccl_tests_output.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/link_peak.hpp"
#include "workloads/runtime/nccl_transport.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench {

namespace {
constexpr std::size_t kKeepOutput = 16u << 20;  // the last 16 MiB of each process's output are parsed
constexpr std::size_t kMaxOutputFile = 64u << 20;

// The process groups of the running program, for the signal handler: the agent ends a run by
// signalling our group, and the program's groups must go with it.
constexpr int kMaxGroups = 1024;
std::atomic<pid_t> g_groups[kMaxGroups];
std::atomic<int> g_group_count{0};

void forward_and_exit(int sig) {
  const int n = g_group_count.load();
  for (int i = 0; i < n; ++i)
    if (pid_t g = g_groups[i].load(); g > 0) killpg(g, SIGTERM);
  timespec grace{1, 0};
  nanosleep(&grace, nullptr);
  for (int i = 0; i < n; ++i)
    if (pid_t g = g_groups[i].load(); g > 0) killpg(g, SIGKILL);
  _exit(128 + sig);
}

bool executable_found(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((d + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

// A port on loopback that was free a moment ago, for MASTER_PORT.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 29500;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 29500;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// The GPUs this run was given: CUDA_VISIBLE_DEVICES holds the node's (NVML) indices.
Topology visible_gpus() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v || !*v) return Topology{};
  const Topology node = discover_topology();
  std::vector<std::string> ids;
  std::stringstream list(v);
  for (std::string item; std::getline(list, item, ',');) {
    for (const auto& g : node.gpus)
      if (std::to_string(g.index) == item || g.uuid == item) ids.push_back(g.pci_bus_id);
  }
  try {
    return restrict_to(node, ids);
  } catch (const Error&) {
    return Topology{};
  }
}

struct Running {
  CommandProcess plan;
  ChildProcess child;
  std::string output;   // the last kKeepOutput bytes
  std::string pending;  // a line not yet ended
  bool eof = false;
  bool truncated = false;
};

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  std::size_t end = pos;
  for (std::size_t n = 0; pos > 0 && n < lines; --pos)
    if (text[pos - 1] == '\n') ++n;
  std::string t = text.substr(pos, end - pos);
  for (auto& c : t)
    if (c == '\n') c = '|';
  return t.size() > 1500 ? "..." + t.substr(t.size() - 1500) : t;
}

// Echoes a line of the program into our output (the agent's run log), never as a record.
void echo(const std::string& line, int rank, bool tagged) {
  std::string l = line.starts_with(kRecordLinePrefix) ? "> " + line : line;
  if (tagged)
    std::printf("[rank %d] %s\n", rank, l.c_str());
  else
    std::printf("%s\n", l.c_str());
}

std::string read_file_capped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("the program wrote no output file " + path);
  std::string s;
  s.resize(kMaxOutputFile + 1);
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  if (s.size() > kMaxOutputFile) throw Error(path + " is larger than 64 MiB; not read");
  return s;
}

// Reads every process's output until all have closed it or the deadline passes (true then),
// keeping the last kKeepOutput bytes of each and echoing its lines.
bool pump_output(std::vector<Running>& procs, std::chrono::steady_clock::time_point deadline) {
  const bool tagged = procs.size() > 1;
  char buf[65536];
  auto all_eof = [&] {
    for (const auto& r : procs)
      if (!r.eof) return false;
    return true;
  };
  bool timed_out = false;
  while (!all_eof()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    std::vector<pollfd> fds;
    std::vector<Running*> who;
    for (auto& r : procs)
      if (!r.eof) {
        fds.push_back({r.child.output_fd(), POLLIN, 0});
        who.push_back(&r);
      }
    if (poll(fds.data(), fds.size(), 200) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Running& r = *who[i];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        r.eof = true;
        continue;
      }
      r.output.append(buf, static_cast<std::size_t>(n));
      if (r.output.size() > kKeepOutput) {
        r.output.erase(0, r.output.size() - kKeepOutput);
        r.truncated = true;
      }
      r.pending.append(buf, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = r.pending.find('\n')) != std::string::npos;) {
        echo(r.pending.substr(0, nl), r.plan.rank, tagged);
        r.pending.erase(0, nl + 1);
      }
      if (r.pending.size() > 65536) {
        echo(r.pending, r.plan.rank, tagged);
        r.pending.clear();
      }
    }
    std::fflush(stdout);
  }
  for (auto& r : procs)
    if (!r.pending.empty()) echo(r.pending, r.plan.rank, tagged);
  std::fflush(stdout);
  return timed_out;
}

// Exit codes of every process, waited for until the deadline; after it (or after a timeout
// already seen, `timed_out` then true) every process group is ended.
std::vector<int> wait_for_exit(std::vector<Running>& procs, std::chrono::steady_clock::time_point deadline,
                               bool& timed_out) {
  std::vector<int> codes;
  for (auto& r : procs) {
    std::optional<int> rc;
    while (!timed_out && !(rc = r.child.try_wait()) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!rc) {
      timed_out = true;
      rc = r.child.terminate_group(std::chrono::seconds(3));
    }
    codes.push_back(*rc);
  }
  if (timed_out)
    for (auto& r : procs) r.child.terminate_group(std::chrono::seconds(3));
  return codes;
}

// The mpirun options of the run: over several nodes each rank must see its own host's GPUs,
// through scalebench-run's --exec-on-host, which reads the run file from SCALEBENCH_RUN_FILE.
MpirunOptions mpirun_for(const RunRequest& run) {
  MpirunOptions mpirun = run.mpirun;
  if (run.run_file.is_object() && run.run_file.value("hosts", Json::array()).size() > 1) {
    setenv("SCALEBENCH_RUN_FILE", run.run_file.dump().c_str(), 1);
    mpirun.rank_prefix = {executable_dir() + "/scalebench-run", "--exec-on-host", "SCALEBENCH_RUN_FILE", "--"};
    mpirun.args.insert(mpirun.args.end(), {"-x", "SCALEBENCH_RUN_FILE"});
  }
  return mpirun;
}

// The environment of the run's records: this node's, and over several nodes (the run file set by
// mpirun_for) the run's hosts as its placement.
RunEnvironment command_environment(const Json& spec, const CommandSpec& command, int ranks, const Topology& gpus) {
  RunEnvironment env = capture_local_environment(ranks, gpus, "command");
  if (const char* run_file = std::getenv("SCALEBENCH_RUN_FILE")) {
    const Json hosts = Json::parse(run_file).value("hosts", Json::array());
    if (hosts.size() > 1) {
      Json names = Json::array();
      for (const auto& h : hosts) names.push_back(h.value("host", std::string()));
      env.placement["nodes"] = hosts.size();
      env.placement["ranks_per_node"] = spec.value("ranks_per_node", 1);
      env.placement["hosts"] = names;
      env.placement["gpus"] = static_cast<int>(hosts.size()) * spec.value("gpus_per_node", 0);
    }
  }
  env.environment["command"] = Json{{"program", command.program}, {"launch", command.launch}};
  return env;
}

// A folder of the run's own for files the program writes ({output_dir}); gone afterwards.
class OutputDir {
 public:
  OutputDir() {
    std::string dir_template = std::filesystem::temp_directory_path().string() + "/scalebench-command-XXXXXX";
    if (!mkdtemp(dir_template.data())) throw Error("cannot create a temporary folder for the run's output");
    path_ = dir_template;
  }
  ~OutputDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The environment variables the program's processes get from this one: the variant's, the GPUs'
// and, with `nccl_log_dir`, those that make NCCL log its connections there.
std::vector<std::string> forwarded_variables(const Json& spec, const std::string& nccl_log_dir) {
  std::vector<std::string> forward;
  if (!nccl_log_dir.empty()) forward = request_nccl_connection_log(nccl_log_dir + "/nccl-%h-%p.log");
  const Json variant_env = spec.value("env", Json::object());  // named: items() only refers to it
  for (const auto& [k, v] : variant_env.items()) forward.push_back(k);
  if (std::getenv("CUDA_VISIBLE_DEVICES")) forward.push_back("CUDA_VISIBLE_DEVICES");
  if (std::getenv("CUDA_DEVICE_ORDER")) forward.push_back("CUDA_DEVICE_ORDER");
  return forward;
}

// Starts every process of the plan, each in its own group, which a signal to this one reaches.
std::vector<Running> start_processes(const std::vector<CommandProcess>& plans) {
  struct sigaction sa {};
  sa.sa_handler = forward_and_exit;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::vector<Running> procs;
  for (const auto& p : plans) {
    ChildProcess::Options o;
    o.env = p.env;
    o.capture_output = true;
    procs.push_back(Running{p, ChildProcess::spawn(p.argv, o), {}, {}, false, false});
    const int n = g_group_count.load();
    if (n < kMaxGroups) {
      g_groups[n] = procs.back().child.pid();
      g_group_count = n + 1;
    }
  }
  return procs;
}

// The records of the program's figures (nccl-tests, MLPerf log, named figures), read from its
// output file when one is named, else from the lead process's output; and what could not be read.
struct Readout {
  std::vector<Json> records;
  std::vector<std::string> problems;
};

Readout read_results(const CommandSpec& command, const std::map<std::string, std::string>& vars, const Running& lead,
                     const Json& context, const Json& spec, const std::string& program) {
  Readout out;
  std::string text = lead.output;
  try {
    if (!command.output_file.empty()) text = read_file_capped(substitute(command.output_file, vars));
    if (command.parser == "nccl-tests" || command.parser == "nccl-tests-json") {
      const NcclTestsOutput nccl =
          command.parser == "nccl-tests" ? parse_nccl_tests_text(text) : parse_nccl_tests_json(text);
      Json c = context;
      if (!nccl.version.empty()) c["environment"]["nccl_tests_version"] = nccl.version;
      for (auto& r : nccl_tests_records(c, nccl, spec.value("params", Json::object()).value("in_place", false)))
        out.records.push_back(std::move(r));
    }
    if (command.parser == "mllog")
      for (auto& r : mllog_records(context, mllog::runs(mllog::parse(text, program), program)))
        out.records.push_back(std::move(r));
    std::vector<Figure> figures = command.figures;
    if (command.parser == "images-per-second") figures.insert(figures.begin(), images_per_second_figure());
    if (!figures.empty()) {
      FigureReadout readout = read_figures(figures, text);
      for (const auto& m : readout.missing)
        out.problems.push_back("figure '" + m + "' is not in the output" +
                               (lead.truncated ? " (its last 16 MiB)" : ""));
      out.problems.insert(out.problems.end(), readout.problems.begin(), readout.problems.end());
      for (auto& r : figure_records(context, readout.values)) out.records.push_back(std::move(r));
    }
  } catch (const Error& e) {
    out.problems.push_back(e.what());
  }
  return out;
}

// The transports NCCL used, over every process's log in `log_dir`, into each record with the
// link's peak; a transport other than the variant's fails the ok records. What is wrong, or "".
std::string note_nccl_transports(std::vector<Json>& records, const std::string& log_dir, const Json& spec,
                                 const Topology& gpus) {
  std::string log;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(log_dir, ec))
    if (f.path().filename().string().rfind("nccl-", 0) == 0) {
      std::ifstream in(f.path());
      std::stringstream ss;
      ss << in.rdbuf();
      log += ss.str();
    }
  const auto transports = count_transports(log);
  const std::string problem =
      transport_mismatch(transports, spec.value("env", Json::object()), spec.value("transport", ""));
  const Json link = path_peak(gpus, transports);
  for (auto& r : records) {
    r["environment"]["nccl_transports"] = transports;
    add_link_peak(r, link);
    if (!problem.empty() && r["status"] == "ok") {
      r["status"] = "failed";
      r["reason"] = problem;
    }
  }
  return problem;
}

// The program's command line (the lead process's), into the records' context and the run log.
void announce(const std::vector<CommandProcess>& plans, Json& context) {
  std::string cmdline;
  for (const auto& a : plans.front().argv) cmdline += (cmdline.empty() ? "" : " ") + a;
  context["environment"]["command"]["argv"] = cmdline;
  std::printf("# %s%s\n", cmdline.c_str(),
              plans.size() > 1 ? (" (x" + std::to_string(plans.size()) + ")").c_str() : "");
  std::fflush(stdout);
}

// The run's own time limit in seconds, a little inside the agent's, so that a hung program still
// leaves a timeout record with its last output.
double own_time_limit(const Json& spec) {
  const double timeout_s = spec.value("timeout_s", 600.0);
  return std::max(timeout_s * 0.9, timeout_s - 5.0);
}

// The record of a run whose processes did not all end well: a timeout, else a failed record
// naming the first process that exited with an error; none when every one exited with 0.
std::optional<Json> bad_end_record(const std::vector<Running>& procs, const std::vector<int>& codes, bool timed_out,
                                   double own_s, const std::string& program, const Json& context) {
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", own_s);
    return status_record(context, "timeout",
                         std::string("no end within ") + limit + " s (the run's timeout, less a margin); ended" +
                             "; last output: " + tail_lines(procs.front().output, 12));
  }
  for (std::size_t i = 0; i < codes.size(); ++i)
    if (codes[i] != 0) {
      const std::string who = procs.size() > 1 ? "rank " + std::to_string(procs[i].plan.rank) + " of " : "";
      return status_record(context, "failed",
                           who + "'" + program + "' exited with code " + std::to_string(codes[i]) +
                               "; last output: " + tail_lines(procs[i].output, 12));
    }
  return std::nullopt;
}

// Emits the records read from the output, then a failed record for what could not be read; the
// run fails when anything is wrong or nothing was read.
void emit_results(WorkloadRun& shell, const Readout& readout, const std::string& transport_problem,
                  const Running& lead) {
  for (const auto& r : readout.records) shell.emit(r);
  if (!transport_problem.empty()) {
    shell.note_failed();
  } else if (!readout.problems.empty()) {
    std::string why;
    for (const auto& p : readout.problems) why += (why.empty() ? "" : "; ") + p;
    shell.fail(why + "; last output: " + tail_lines(lead.output, 12));
  } else if (readout.records.empty()) {
    shell.note_failed();
  }
}
}  // namespace

// A command workload's run in phases: its shell and output folder, the processes planned (a
// skipped record when the program is missing), run to their end or the run's own deadline (a
// timeout or failed record), then the records read from their output.
int run_command_workload(const RunRequest& run) {
  const MpirunOptions mpirun = mpirun_for(run);
  const Json& spec = run.spec;
  const CommandSpec command = command_from_json(spec.at("command"));
  const int ranks = spec.value("nodes", 1) * spec.value("ranks_per_node", 1);

  const Topology gpus = visible_gpus();
  RunRequest reported = run;  // records in either format: the program's own output is its table
  reported.records = true;
  WorkloadRun shell(reported, spec.value("params", Json::object()), command_environment(spec, command, ranks, gpus));
  const OutputDir output_dir;

  const auto vars = command_vars(spec, run.run_id, output_dir.path(), "127.0.0.1", free_port());
  // On GPUs the program may well use NCCL: its INFO log (to files of the run's folder) says which
  // transport it connected with, checked against the variant's as for scalebench's own runs.
  const bool read_nccl_log = spec.value("gpu", false) && !std::getenv("NCCL_DEBUG");
  const auto plans =
      plan_command(command, vars, ranks, forwarded_variables(spec, read_nccl_log ? output_dir.path() : ""), mpirun);

  const std::string program = substitute(command.program, vars);
  if (!executable_found(program)) {
    shell.skip("program '" + program + "' not found" + (program.find('/') == std::string::npos ? " on PATH" : ""));
    return shell.exit_code();
  }
  announce(plans, shell.context());

  const double own_s = own_time_limit(spec);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(own_s));
  std::vector<Running> procs = start_processes(plans);
  bool timed_out = pump_output(procs, deadline);
  const std::vector<int> codes = wait_for_exit(procs, deadline, timed_out);
  g_group_count = 0;
  if (std::optional<Json> bad = bad_end_record(procs, codes, timed_out, own_s, program, shell.context())) {
    shell.emit(*bad);
    shell.note_failed();
    return shell.exit_code();
  }

  Readout readout = read_results(command, vars, procs.front(), shell.context(), spec, program);
  const std::string transport_problem =
      read_nccl_log ? note_nccl_transports(readout.records, output_dir.path(), spec, gpus) : std::string();
  emit_results(shell, readout, transport_problem, procs.front());
  return shell.exit_code();
}

}  // namespace scalebench
