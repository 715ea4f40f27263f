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
}  // namespace

RunSupervisor::Outcome RunSupervisor::execute(long long run_id, int attempt, const Json& spec,
                                              const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts,
                                              const std::atomic<bool>& cancel, const RecordSink& sink) {
  const std::string base = work_dir_ + "/run-" + std::to_string(run_id) + "-" + std::to_string(attempt);
  const std::string spec_file = base + ".json";
  const Json run_file = run_file_json(run_id, attempt, spec, hosts, launch_.bind_ranks);
  std::ofstream(spec_file) << run_file.dump(2);
  std::ofstream log_file(base + ".log");

  LaunchPlan plan = plan_launch(launch_, spec, spec_file, gpu_ids, hosts, base + ".hosts", run_file.dump());
  if (!plan.hostfile_text.empty()) {
    std::ofstream(base + ".hosts") << plan.hostfile_text;
    log_file << "# hostfile " << base << ".hosts:\n" << plan.hostfile_text;
  }
  std::string cmdline;
  for (const auto& a : plan.argv) cmdline += (cmdline.empty() ? "" : " ") + a;
  log_file << "# " << cmdline << "\n";
  log::info("run " + std::to_string(run_id) + ": " + cmdline);

  ChildProcess::Options options;
  options.env = plan.env;
  options.capture_output = true;
  options.kill_with_parent = true;  // an agent killed outright takes its mpirun (and so the job) along
  ChildProcess child = ChildProcess::spawn(plan.argv, options);

  const double timeout_s = spec.value("timeout_s", 600.0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  Outcome outcome;
  std::deque<std::string> tail;
  std::string pending;
  int failed_records = 0, skipped_records = 0;
  std::string skip_reason, first_failure, timeout_reason;
  bool timed_out = false, cancelled = false, eof = false;

  auto handle_line = [&](const std::string& line) {
    log_file << line << "\n";
    if (line.starts_with(kRecordLinePrefix)) {
      try {
        Json r = Json::parse(line.substr(std::char_traits<char>::length(kRecordLinePrefix)));
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
      return;
    }
    if (line.empty()) return;
    tail.push_back(line.size() > 300 ? line.substr(0, 300) + "..." : line);
    if (tail.size() > kTailLines) tail.pop_front();
  };

  char buf[65536];
  while (!eof) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    if (cancel.load()) {
      cancelled = true;
      break;
    }
    pollfd p{child.output_fd(), POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(child.output_fd(), buf, sizeof buf);
    if (n <= 0) {
      eof = true;
      break;
    }
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      handle_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
    if (pending.size() > kMaxLine) {
      handle_line(pending.substr(0, 300) + "... (line over 4 MiB dropped)");
      pending.clear();
    }
  }
  if (!pending.empty()) handle_line(pending);

  int rc;
  if (timed_out || cancelled) {
    rc = child.terminate_group(std::chrono::seconds(3));  // every rank of the group goes
  } else {
    // Output closed: the ranks are done; wait for mpirun itself, within the deadline.
    while (!child.try_wait() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    timed_out = !child.try_wait();
    rc = timed_out ? child.terminate_group(std::chrono::seconds(3)) : *child.try_wait();
  }
  log_file << "# exit " << rc << "\n";

  const std::string last = tail.empty() ? "" : "; last output: " + join_tail(tail);
  if (cancelled) {
    outcome.status = "cancelled";
    outcome.reason = "cancelled by user while running";
  } else if (timed_out || !timeout_reason.empty()) {
    outcome.status = "timeout";
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    outcome.reason = timeout_reason.empty() ? std::string("no end within the run's timeout of ") + limit +
                                                  " s; every rank was killed" + last
                                            : timeout_reason;
  } else if (rc != 0 && rc != 3) {
    outcome.status = "failed";
    outcome.reason = "ranks exited with code " + std::to_string(rc) + last;
  } else if (failed_records > 0 || rc == 3) {
    outcome.status = "failed";
    outcome.reason = failed_records == 1 && !first_failure.empty()
                         ? first_failure
                         : "correctness check failed (" + std::to_string(failed_records) + " records)";
  } else if (outcome.records > 0 && skipped_records == outcome.records) {
    outcome.status = "skipped";
    outcome.reason = skip_reason;
  } else if (outcome.records == 0) {
    outcome.status = "failed";
    outcome.reason = "the run produced no records" + last;
  } else {
    outcome.status = "ok";
  }
  return outcome;
}

}  // namespace scalebench
