#include "bench/load_options.hpp"

#include <algorithm>
#include <iostream>

#include "common/program_options.hpp"

namespace scalebench::load {

std::optional<int> parse_options(int argc, char** argv, Options* o) {
  CLI::App app(
      "scalebench-coordinator-load: plays a cluster of agents against a real coordinator over loopback HTTP\n"
      "and prints what the coordinator sustained.",
      "scalebench-coordinator-load");
  app.footer(
      "Exit codes: 0 done; 1 a call failed or an acknowledged record is missing from the store, or the bench could "
      "not run\n(a coordinator that does not start: its log's last lines are printed); 2 bad options; 130/143 "
      "interrupted by\nSIGINT/SIGTERM (its coordinator stopped, its temporary folder removed).\n"
      "Examples:\n"
      "  scalebench-coordinator-load --agents 1000,2000,4000 --duration 30\n"
      "  taskset -c 1 scalebench-coordinator-load --agents 4000 --coordinator-cpus 0   # each side on its own core\n"
      "  scalebench-coordinator-load --coordinator http://127.0.0.1:8470 --coordinator-pid 1234 --agents 500");
  add_standard_options(app, "scalebench-coordinator-load");
  app.add_option("--agents", o->agents,
                 "agents to play; several sizes run one after another, each against a fresh coordinator and "
                 "store, and end with the cost curve")
      ->delimiter(',')
      ->capture_default_str()
      ->type_name("N[,N...]")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--gpus", o->gpus, "GPUs per agent")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--duration", o->duration_s, "seconds of streaming and heartbeating per size")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--batch", o->batch, "records per POST, as the agent's outbox batches them")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--record-threads", o->record_threads, "connections posting records at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--heartbeat-interval", o->heartbeat_interval_s, "seconds between each agent's heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--coordinator", o->url,
                 "target a running coordinator instead of starting one; records are then counted through the "
                 "API, and RSS needs --coordinator-pid")
      ->type_name("URL");
  app.add_option("--coordinator-pid", o->pid, "sample this process's RSS")->type_name("PID");
  app.add_option("--db", o->db,
                 "the store of the coordinator it starts (one size only; default: a fresh one in a temporary "
                 "folder, removed at exit unless --keep)")
      ->type_name("FILE");
  app.add_option("--threads", o->threads, "the started coordinator's --threads (default: its own default)")
      ->check(CLI::Range(1, 256));
  app.add_option("--coordinator-cpus", o->coordinator_cpus,
                 "the started coordinator runs on these CPUs only (taskset's list), so that its budget is stated "
                 "while the played agents use the other cores")
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
    return parse_failure(app, e, "scalebench-coordinator-load");
  }
  const bool sizes_ok =
      !o->agents.empty() && std::all_of(o->agents.begin(), o->agents.end(), [](int n) { return n > 0; });
  if (!sizes_ok || o->gpus < 1 || o->batch < 1 || o->record_threads < 1 || o->duration_s <= 0) {
    std::cerr << "--agents, --gpus, --batch, --record-threads and --duration must be positive\n";
    return 2;
  }
  if (o->agents.size() > 1 && (!o->db.empty() || !o->url.empty())) {
    std::cerr << "several --agents sizes start a coordinator each: not with --db or --coordinator\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace scalebench::load
