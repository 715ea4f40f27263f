#include "agent/run_supervisor.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <thread>

#include "common/log.hpp"
#include "common/process.hpp"
#include "record/record.hpp"

namespace scalebench {

namespace {
constexpr std::size_t kTailLines = 15;
constexpr std::size_t kMaxLine = 4u << 20;  // a record line longer than this is a broken run

std::string join_tail(const std::deque<std::string>& tail) {
  std::string s;
  for (const auto& l : tail) s += (s.empty() ? "" : " | ") + l;
  return s.size() > 1500 ? "..." + s.substr(s.size() - 1500) : s;
}

// The run's files beside its log (the run file the ranks read, the hostfile), and its command
// line, said in the log and the agent's: what to look at when a run goes wrong.
LaunchPlan prepare_launch(const LaunchConfig& launch, const std::string& base, long long run_id, int attempt,
                          const Json& spec, const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts,
                          std::ofstream& log_file) {
  const std::string spec_file = base + ".json";
  const Json run_file = run_file_json(run_id, attempt, spec, hosts, launch.bind_ranks);
  std::ofstream(spec_file) << run_file.dump(2);
  LaunchPlan plan = plan_launch(launch, spec, spec_file, gpu_ids, hosts, base + ".hosts", run_file.dump());
  if (!plan.hostfile_text.empty()) {
    std::ofstream(base + ".hosts") << plan.hostfile_text;
    log_file << "# hostfile " << base << ".hosts:\n" << plan.hostfile_text;
  }
  std::string cmdline;
  for (const auto& a : plan.argv) cmdline += (cmdline.empty() ? "" : " ") + a;
  log_file << "# " << cmdline << "\n";
  log::info("run " + std::to_string(run_id) + ": " + cmdline);
  return plan;
}

// What the run's output said, line by line: its records passed on to the sink as they come (and
// counted by status, for the outcome), any other line kept in a short tail for the reason.
struct OutputSeen {
  OutputSeen(std::ofstream& log, const RunSupervisor::RecordSink& records, RunSupervisor::Outcome& out)
      : log_file(log), sink(records), outcome(out) {}
  std::ofstream& log_file;
  const RunSupervisor::RecordSink& sink;
  RunSupervisor::Outcome& outcome;  // records and outcome_recorded
  std::deque<std::string> tail;
  int failed_records = 0, skipped_records = 0;
  std::string skip_reason, first_failure, timeout_reason;

  void line(const std::string& text) {
    log_file << text << "\n";
    if (text.starts_with(kRecordLinePrefix)) {
      record(text);
      return;
    }
    if (text.empty()) return;
    tail.push_back(text.size() > 300 ? text.substr(0, 300) + "..." : text);
    if (tail.size() > kTailLines) tail.pop_front();
  }

  void record(const std::string& text) {
    try {
      Json r = Json::parse(text.substr(std::char_traits<char>::length(kRecordLinePrefix)));
      if (r.value("status", "") == "failed" && ++failed_records == 1) first_failure = r.value("reason", "");
      if (r.value("status", "") == "timeout") timeout_reason = r.value("reason", "");
      if (r.value("metric", "") == "run" && (r["status"] == "failed" || r["status"] == "timeout"))
        outcome.outcome_recorded = true;
      if (r.value("status", "") == "skipped") {
        ++skipped_records;
        skip_reason = r.value("reason", "");
      }
      ++outcome.records;
      sink(std::move(r));
    } catch (const std::exception& e) {
      tail.push_back(std::string("unparsable record: ") + e.what());
    }
  }
};

// The run's end at the latest: its start plus its timeout (fractional seconds).
using Deadline = decltype(std::chrono::steady_clock::now() + std::chrono::duration<double>());

// Why reading the output stopped.
enum class OutputEnd { closed, timed_out, cancelled };

// The child's output read line by line until it closes, the deadline passes or the run is
// cancelled. Polled with a short timeout, so that the deadline and a cancel are seen while the
// ranks print nothing.
OutputEnd read_output(ChildProcess& child, Deadline deadline, const std::atomic<bool>& cancel, OutputSeen& seen) {
  OutputEnd end = OutputEnd::closed;
  std::string pending;
  char buf[65536];
  while (true) {
    if (std::chrono::steady_clock::now() >= deadline) {
      end = OutputEnd::timed_out;
      break;
    }
    if (cancel.load()) {
      end = OutputEnd::cancelled;
      break;
    }
    pollfd p{child.output_fd(), POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(child.output_fd(), buf, sizeof buf);
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      seen.line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
    if (pending.size() > kMaxLine) {
      seen.line(pending.substr(0, 300) + "... (line over 4 MiB dropped)");
      pending.clear();
    }
  }
  if (!pending.empty()) seen.line(pending);
  return end;
}

// The launcher's exit code. At a timeout or cancel its whole process group is killed; after its
// output closed (the ranks are done) it is waited for within the deadline, else killed and
// `end` becomes a timeout.
int wait_for_exit(ChildProcess& child, Deadline deadline, OutputEnd& end) {
  if (end != OutputEnd::closed) return child.terminate_group(std::chrono::seconds(3));  // every rank of the group goes
  while (!child.try_wait() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (child.try_wait()) return *child.try_wait();
  end = OutputEnd::timed_out;
  return child.terminate_group(std::chrono::seconds(3));
}

// The run's status and reason, the first that applies in this order: cancelled, timed out (by
// the agent or as the run said itself), the launcher failed, a correctness check failed, every
// record skipped, no record at all; else ok.
void judge(OutputEnd end, int rc, double timeout_s, const OutputSeen& seen, RunSupervisor::Outcome& outcome) {
  const std::string last = seen.tail.empty() ? "" : "; last output: " + join_tail(seen.tail);
  if (end == OutputEnd::cancelled) {
    outcome.status = "cancelled";
    outcome.reason = "cancelled by user while running";
  } else if (end == OutputEnd::timed_out || !seen.timeout_reason.empty()) {
    outcome.status = "timeout";
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    outcome.reason = seen.timeout_reason.empty() ? std::string("no end within the run's timeout of ") + limit +
                                                       " s; every rank was killed" + last
                                                 : seen.timeout_reason;
  } else if (rc != 0 && rc != 3) {
    outcome.status = "failed";
    outcome.reason = "ranks exited with code " + std::to_string(rc) + last;
  } else if (seen.failed_records > 0 || rc == 3) {
    outcome.status = "failed";
    outcome.reason = seen.failed_records == 1 && !seen.first_failure.empty()
                         ? seen.first_failure
                         : "correctness check failed (" + std::to_string(seen.failed_records) + " records)";
  } else if (outcome.records > 0 && seen.skipped_records == outcome.records) {
    outcome.status = "skipped";
    outcome.reason = seen.skip_reason;
  } else if (outcome.records == 0) {
    outcome.status = "failed";
    outcome.reason = "the run produced no records" + last;
  } else {
    outcome.status = "ok";
  }
}
}  // namespace

// In phases, in the run's order: its files and command line, the launch, its output read as it
// comes (records reach the coordinator while the run goes on), the launcher's exit, then the
// outcome judged from all of them.
RunSupervisor::Outcome RunSupervisor::execute(long long run_id, int attempt, const Json& spec,
                                              const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts,
                                              const std::atomic<bool>& cancel, const RecordSink& sink) {
  const std::string base = work_dir_ + "/run-" + std::to_string(run_id) + "-" + std::to_string(attempt);
  std::ofstream log_file(base + ".log");
  const LaunchPlan plan = prepare_launch(launch_, base, run_id, attempt, spec, gpu_ids, hosts, log_file);

  ChildProcess::Options options;
  options.env = plan.env;
  options.capture_output = true;
  options.kill_with_parent = true;  // an agent killed outright takes its mpirun (and so the job) along
  ChildProcess child = ChildProcess::spawn(plan.argv, options);

  const double timeout_s = spec.value("timeout_s", 600.0);
  const Deadline deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  Outcome outcome;
  OutputSeen seen{log_file, sink, outcome};
  OutputEnd end = read_output(child, deadline, cancel, seen);
  const int rc = wait_for_exit(child, deadline, end);
  log_file << "# exit " << rc << "\n";
  judge(end, rc, timeout_s, seen, outcome);
  return outcome;
}

}  // namespace scalebench
