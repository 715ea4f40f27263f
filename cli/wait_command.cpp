// scalebench wait: blocks until an experiment has ended and exits with its outcome, for batch
// scripts (deploy/slurm) and CI that must not parse the text `status` prints.
#include <chrono>
#include <cmath>
#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "cli/results_format.hpp"
#include "common/error.hpp"

namespace scalebench {

namespace {

// A --timeout or --interval: seconds, a number >= 0 (> 0 for the interval); `fallback` when not given.
double seconds_option(const CliArgs& a, const std::string& name, double fallback, bool zero_ok) {
  const std::optional<double> v = a.opt_number(name);
  if (!v) return fallback;
  if (!(*v >= 0) || (!zero_ok && *v == 0))
    throw Error("--" + name + " takes seconds, a number " + (zero_ok ? ">= 0" : "> 0") + ", got '" + a.opt(name) + "'");
  return *v;
}

// The line printed when the experiment's state changes: progress and the count of each run state.
std::string state_line(const Json& e) {
  return "experiment " + e.value("name", std::string()) + " (id " + e["id"].dump() + "): " + e["done"].dump() + "/" +
         e["runs"].dump() + " runs done, " + e["states"].dump();
}

}  // namespace

int cmd_wait(const CliArgs& a) {
  if (a.positional.size() != 1) throw Error("usage: scalebench wait EXPERIMENT [--timeout SECONDS]");
  const double timeout = seconds_option(a, "timeout", -1, true);
  const double interval = seconds_option(a, "interval", 2, false);
  HttpClient client = coordinator_client(a);
  const std::string target = "/api/v1/experiments/" + a.positional[0];
  // A coordinator that restarts is waited for; one that stays away this long is an exit 4.
  constexpr double kUnreachableFor = 30;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double unreachable_since = -1;
  std::string last;
  Json e;
  for (;;) {
    try {
      e = client.get_json(target);
      unreachable_since = -1;
    } catch (const UnreachableError& err) {
      if (unreachable_since < 0) unreachable_since = elapsed();
      if (elapsed() - unreachable_since >= kUnreachableFor) throw;
      std::cerr << "scalebench: " << err.what() << "; trying again\n";
      e = Json();
    }
    if (!e.is_null()) {
      const std::string line = state_line(e);
      if (line != last) std::cout << line << "\n" << std::flush;
      last = line;
      if (e.value("finished", false)) break;
    }
    if (timeout >= 0 && elapsed() >= timeout) {
      std::cerr << "scalebench: experiment " << a.positional[0] << " has not ended after " << timeout << " s\n";
      return 3;
    }
    double pause = interval;
    if (timeout >= 0) pause = std::min(pause, std::max(0.0, timeout - elapsed()));
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
  const Json records = Source(client).records(e["id"].dump());
  const auto refs = reference_failures(records);
  for (const auto& f : refs) std::cout << "REFERENCE FAILED: " << f << "\n";
  const Json states = e["states"];
  const int bad = states.value("failed", 0) + states.value("timeout", 0) + states.value("cancelled", 0);
  std::cout << "experiment " << e.value("name", std::string()) << " ended: " << records.size() << " records; "
            << (refs.empty() ? "" : std::to_string(refs.size()) + " reference failures; ")
            << (bad ? std::to_string(bad) + " runs failed, timed out or were cancelled" : "every run ended ok") << "\n";
  if (!refs.empty()) return 1;
  return bad > 0 ? 3 : 0;
}

}  // namespace scalebench
