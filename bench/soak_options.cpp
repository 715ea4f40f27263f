#include "bench/soak_options.hpp"

#include <algorithm>
#include <iostream>

#include "common/program_options.hpp"
#include "common/units.hpp"

namespace scalebench::load {

namespace {
// A duration option ("30m", "90s", "1h" or seconds) into `out`; an error names the option.
CLI::Option* add_duration(CLI::App& app, const std::string& name, double* out, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [name, out](const std::string& text) {
            auto s = parse_duration_s(text);
            if (!s || *s <= 0) throw CLI::ValidationError(name, "'" + text + "' is not a positive duration (30m, 90s)");
            *out = *s;
          },
          help)
      ->type_name("DURATION");
}
}  // namespace

std::optional<int> parse_soak_options(int argc, char** argv, SoakOptions* o) {
  CLI::App app(
      "scalebench-coordinator-soak: plays a changing cluster of agents against a real coordinator for a long time\n"
      "(agents leaving and joining, studies submitted and cancelled, the coordinator restarted in the middle) and\n"
      "compares its first minutes with its last: memory, heartbeat latency, records/s; then checks in the store\n"
      "that each record sent is there exactly once.",
      "scalebench-coordinator-soak");
  app.footer(
      "Exit codes: 0 every check held; 1 a check failed (the verdict line names it) or the soak could not run;\n"
      "2 bad options; 130/143 interrupted by SIGINT/SIGTERM (its coordinator stopped, its folder removed).\n"
      "Examples:\n"
      "  scalebench-coordinator-soak                                  # 30 minutes at 2000 agents x 8 GPUs\n"
      "  scalebench-coordinator-soak --duration 3m --agents 200 --window 30s --compare 30s");
  add_standard_options(app, "scalebench-coordinator-soak");
  add_duration(app, "--duration", &o->duration_s, "how long the cluster plays (default 30m)");
  app.add_option("--agents", o->agents, "agents at the start (each holding a run of --gpus GPUs)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  app.add_option("--gpus", o->gpus, "GPUs per agent")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--record-rate", o->record_rate,
                 "records per second sent by all agents together (default: one per agent and second)")
      ->check(CLI::Range(1.0, 1e7));
  app.add_option("--batch", o->batch, "records per POST, as an agent's outbox batches them")
      ->capture_default_str()
      ->check(CLI::Range(1, 500));
  app.add_option("--churn", o->churn,
                 "agents that stop heartbeating (and are declared lost), and new ones that register, per window "
                 "(default: 1% of --agents)")
      ->check(CLI::Range(0, 100000));
  add_duration(app, "--window", &o->window_s,
               "the span of each printed line of figures (default 1m, or --compare when shorter)");
  add_duration(
      app, "--compare", &o->compare_s,
      "the spans at the start and at the end: no figure of the last may be 10% worse (default 5m, or a third of "
      "--duration when shorter)");
  app.add_option("--heartbeat-interval", o->heartbeat_interval_s, "seconds between each agent's heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 60.0));
  app.add_option("--heartbeat-timeout", o->heartbeat_timeout_s,
                 "the coordinator's --heartbeat-timeout: how soon a leaving agent is declared lost")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--restart-signal", o->restart_signal,
                 "how the coordinator is ended in the middle before it is started again on the same store: KILL "
                 "(a crash: nothing acknowledged may be lost), TERM (an operator's restart), or NONE (no restart: "
                 "the control for a change that follows one)")
      ->capture_default_str()
      ->check(CLI::IsMember({"KILL", "TERM", "NONE"}));
  app.add_option("--coordinator-cpus", o->coordinator_cpus, "the coordinator runs on these CPUs only (taskset's list)")
      ->type_name("LIST");
  app.add_option("--coordinator-arg", o->coordinator_args,
                 "one more option for the started coordinator, as its command line takes it (repeat it for more: "
                 "--coordinator-arg=--record-nice --coordinator-arg=0), for a change measured against its control")
      ->allow_extra_args(false)
      ->type_name("ARG");
  app.add_flag("--keep", o->keep, "keep the temporary folder (store, coordinator log)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, "scalebench-coordinator-soak");
  }
  if (o->record_rate == 0) o->record_rate = o->agents;
  if (app.count("--churn") == 0) o->churn = o->agents / 100;
  if (o->churn >= o->agents) {
    std::cerr << "--churn " << o->churn << ": must be under --agents " << o->agents << "\n";
    return 2;
  }
  // A short soak (while developing it) compares thirds of itself, a line per compared span.
  if (app.count("--compare") == 0) o->compare_s = std::min(o->compare_s, o->duration_s / 3);
  if (app.count("--window") == 0) o->window_s = std::min(o->window_s, o->compare_s);
  if (o->window_s > o->duration_s || o->compare_s * 2 > o->duration_s) {
    std::cerr << "--duration must hold a --window and two --compare spans (one at the start, one at the end)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace scalebench::load
