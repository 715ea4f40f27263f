// scalebench accept: the acceptance battery over every agent, its verdicts per GPU and node, the
// bisection of a slow collective between nodes, and what an operator acts on (exit code, JSON,
// drain lines).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "accept/battery.hpp"
#include "accept/bisect.hpp"
#include "accept/default_rules.hpp"
#include "accept/verdict.hpp"
#include "cli/accept_runner.hpp"
#include "cli/commands.hpp"
#include "cli/local_cluster.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/process.hpp"
#include "record/table_printer.hpp"

namespace scalebench {

namespace {

// The nodes the battery runs on: every alive agent.
std::vector<accept::Node> alive_nodes(HttpClient& client) {
  std::vector<accept::Node> nodes;
  for (const Json& a : client.get_json("/api/v1/agents").value("agents", Json::array()))
    if (a.value("state", "") == "alive")
      nodes.push_back({a["id"].get<std::string>(), static_cast<int>(a.value("gpus", Json::array()).size())});
  return nodes;
}

// An item that ended without its records: a failed verdict for each of its nodes.
void item_failures(const ItemOutcome& o, std::vector<accept::Verdict>& out) {
  if (o.state == "ok") return;
  for (const std::string& node : o.item.agents) {
    accept::Verdict v;
    v.host = o.item.agents.size() == 1 ? node : "";
    v.check = o.item.workload + " (" + o.item.label + ")";
    v.rule = "battery-completes";
    v.rule_where = "scalebench accept";
    v.outcome = "fail";
    v.reason = o.reason;
    out.push_back(std::move(v));
    if (o.item.agents.size() != 1) break;  // a run over several nodes: one verdict for all of them
  }
}

// The records the rules judge: measured ones and skipped ones (a skip says why); runs that failed
// or timed out are judged by item_failures instead.
std::vector<Json> judged_records(const std::vector<ItemOutcome>& outcomes) {
  std::vector<Json> records;
  for (const ItemOutcome& o : outcomes)
    for (const Json& r : o.records)
      if (r.value("metric", "") != "run" || r.value("status", "") == "skipped") records.push_back(r);
  return records;
}

// Whether the collective between nodes fell below its band, or failed outright (a node that
// cannot connect is looked for the same way).
bool collective_failed(const std::vector<accept::Verdict>& verdicts, std::string* why) {
  for (const accept::Verdict& v : verdicts)
    if (v.host.empty() && v.check.rfind("collective", 0) == 0 && v.outcome == "fail") {
      *why = accept::describe(v);
      return true;
    }
  return false;
}

std::string quoted(std::string s) {
  for (char& c : s)
    if (c == '"' || c == '\n' || c == '\\') c = '\'';
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

struct Options {
  accept::Level level;
  accept::RuleSet rules;
  std::vector<Json> baseline;
  std::string json_file;
  bool drain = false;
};

Options read_options(const CliArgs& a) {
  if (!a.positional.empty()) throw Error("scalebench accept takes no positional argument (see --help)");
  Options o;
  o.level = accept::level_named(a.opt("level", "quick"));
  o.rules = accept::parse_rules(accept::kDefaultRules, accept::kDefaultRulesSource);
  if (a.options.count("rules")) o.rules = accept::override_rules(o.rules, accept::load_rules(a.opt("rules")));
  if (a.options.count("baseline"))
    for (const Json& r : read_records_file(a.opt("baseline"))) o.baseline.push_back(r);
  o.json_file = a.opt("json");
  o.drain = a.options.count("drain") > 0;
  return o;
}

// The bisection's measurement: the collective on each group at once, judged by the same rules.
accept::MeasureGroups measure_with(BatteryRunner& runner, const Options& o, bool gpus, const std::string& tag,
                                   int* counter) {
  return [&runner, &o, gpus, tag, counter](const std::vector<std::vector<std::string>>& groups) {
    std::vector<accept::Item> items;
    for (const auto& g : groups)
      items.push_back(accept::cross_node_all_reduce(o.level, g, gpus, tag + "-bisect-" + std::to_string(++*counter)));
    const auto outcomes = runner.run(items, std::chrono::seconds(o.level.bound_s), "bisection:");
    std::vector<accept::GroupResult> results;
    for (const ItemOutcome& out : outcomes) {
      accept::GroupResult g;
      if (out.state != "ok") {
        g.slow = true;
        g.why = out.reason;
      } else {
        g.slow = collective_failed(accept::evaluate(o.rules, judged_records({out}), o.baseline), &g.why);
        for (const Json& r : out.records)
          if (r.value("metric", "") == "busbw" && r["value"].is_number()) g.value = r["value"].get<double>();
      }
      results.push_back(g);
    }
    return results;
  };
}

void print_verdicts(const std::vector<accept::Verdict>& verdicts, const std::vector<accept::Rollup>& nodes) {
  std::cout << "\nverdicts per node:\n";
  const std::vector<FixedColumn> columns{{24, true}, {8, true}, {0}};
  std::cout << fixed_row(columns, {"node", "verdict", "first reason"}) << "\n";
  for (const accept::Rollup& n : nodes)
    std::cout << fixed_row(columns, {n.host.empty() ? "(between nodes)" : n.host, n.outcome,
                                     n.reasons.empty() ? "-" : n.reasons.front()})
              << "\n";
  int pass = 0, warn = 0, fail = 0, skip = 0;
  for (const accept::Verdict& v : verdicts) {
    pass += v.outcome == "pass";
    warn += v.outcome == "warn";
    fail += v.outcome == "fail";
    skip += v.outcome == "skip";
  }
  std::cout << "\n"
            << verdicts.size() << " checks: " << pass << " pass, " << warn << " warn, " << fail << " fail, " << skip
            << " skipped\n";
  for (const accept::Verdict& v : verdicts)
    if (v.outcome == "fail" || v.outcome == "warn")
      std::cout << "  " << (v.host.empty() ? "(between nodes)" : v.host) << ": " << accept::describe(v) << "\n";
}

Json verdicts_json(const std::string& level, const std::vector<accept::Verdict>& verdicts,
                   const std::vector<accept::Rollup>& nodes, const std::vector<accept::Rollup>& gpus,
                   const std::optional<accept::BisectOutcome>& bisection, const std::vector<std::string>& drains) {
  Json j{{"level", level}, {"verdicts", Json::array()}, {"nodes", Json::array()}, {"gpus", Json::array()}};
  for (const auto& v : verdicts) j["verdicts"].push_back(accept::to_json(v));
  for (const auto& n : nodes) j["nodes"].push_back(accept::to_json(n));
  for (const auto& g : gpus) j["gpus"].push_back(accept::to_json(g));
  if (bisection) {
    Json steps = Json::array();
    for (const auto& s : bisection->steps) {
      Json step = Json::array();
      for (std::size_t i = 0; i < s.groups.size(); ++i)
        step.push_back(Json{{"nodes", s.groups[i]}, {"slow", s.results[i].slow}, {"busbw", s.results[i].value}});
      steps.push_back(step);
    }
    j["bisection"] = Json{{"named", bisection->named}, {"conclusion", bisection->conclusion}, {"steps", steps}};
  }
  j["drain"] = drains;
  return j;
}

// The battery as planned on the nodes alive now; `tag` names its experiments.
struct Battery {
  std::vector<accept::Node> nodes;
  std::string tag;
  std::vector<accept::Item> items;
};

// The battery's items for every alive agent, announced with what this build leaves out.
Battery plan_battery(HttpClient& client, const Options& o) {
  Battery b;
  b.nodes = alive_nodes(client);
  if (b.nodes.empty()) throw Error("no alive agent at " + client.base_url() + ": nothing to accept");
  b.tag = "accept-" + std::to_string(std::time(nullptr));
  std::vector<std::string> left_out;
  b.items = accept::battery(o.level, b.nodes, b.tag, &left_out);
  std::cout << "scalebench accept, level " << o.level.name << " (<= " << o.level.bound_s / 60
            << " min per node): " << b.nodes.size() << " node" << (b.nodes.size() == 1 ? "" : "s") << ", "
            << b.items.size() << " items, " << o.rules.rules.size() << " rules\n";
  if (!left_out.empty()) {
    std::string list;
    for (const auto& w : left_out) list += (list.empty() ? "" : ", ") + w;
    std::cout << "not in this build, left out: " << list << "\n";
  }
  return b;
}

// Every item run, its records labelled with its node. An item whose agent stopped answering says
// so, rather than only that its run did not end.
std::vector<ItemOutcome> run_battery(HttpClient& client, BatteryRunner& runner, const Options& o,
                                     const std::vector<accept::Item>& items) {
  // Items of one node run one after another; give the whole battery the level's bound plus the
  // cross-node item's, and a minute of slack for scheduling.
  std::vector<ItemOutcome> outcomes = runner.run(items, std::chrono::seconds(o.level.bound_s + 60), "battery:");
  for (ItemOutcome& out : outcomes) label_with_node(out);
  std::set<std::string> alive_after;
  for (const accept::Node& n : alive_nodes(client)) alive_after.insert(n.agent);
  for (ItemOutcome& out : outcomes)
    if (out.state != "ok")
      for (const std::string& a : out.item.agents)
        if (!alive_after.count(a)) out.reason = "agent " + a + " is lost (no heartbeat); " + out.reason;
  return outcomes;
}

// The rules' verdicts on the records, then a failed verdict for each item that ended without them.
std::vector<accept::Verdict> judge(const Options& o, const std::vector<ItemOutcome>& outcomes) {
  std::vector<accept::Verdict> verdicts = accept::evaluate(o.rules, judged_records(outcomes), o.baseline);
  for (const ItemOutcome& out : outcomes) item_failures(out, verdicts);
  return verdicts;
}

// When the all-reduce between 2 nodes or more is below its band, groups of nodes are measured
// until one is named: a failed verdict each. Nothing when it passed.
std::optional<accept::BisectOutcome> bisect_slow_collective(BatteryRunner& runner, const Options& o, const Battery& b,
                                                            std::vector<accept::Verdict>& verdicts) {
  std::string why;
  if (b.nodes.size() < 2 || !collective_failed(verdicts, &why)) return std::nullopt;
  bool all_gpus = true;
  std::vector<std::string> names;
  for (const auto& n : b.nodes) {
    names.push_back(n.agent);
    all_gpus = all_gpus && n.gpus > 0;
  }
  std::cout << "\nthe all-reduce between the nodes is below its band (" << why << "): bisecting\n";
  int counter = 0;
  std::optional<accept::BisectOutcome> bisection =
      accept::bisect(names, measure_with(runner, o, all_gpus, b.tag, &counter));
  std::cout << "bisection: " << bisection->conclusion << "\n";
  for (const std::string& n : bisection->named) {
    accept::Verdict v;
    v.host = n;
    v.check = "collective.busbw between nodes";
    v.rule = "bisection";
    v.rule_where = "scalebench accept";
    v.outcome = "fail";
    v.reason = bisection->conclusion;
    verdicts.push_back(std::move(v));
  }
  return bisection;
}

// The coordinator's copy of the verdicts (scalebench_node_health on its /metrics).
void store_verdicts(HttpClient& client, const Options& o, const std::vector<accept::Verdict>& verdicts) {
  try {
    const int stored = post_node_health(client, o.level.name, verdicts);
    std::cout << "\n" << stored << " checks stored as scalebench_node_health on " << client.base_url() << "/metrics\n";
  } catch (const std::exception& e) {
    // The verdicts stand (exit code, JSON, drain lines) without the coordinator's copy.
    std::cerr << "warning: the coordinator did not store the verdicts: " << e.what() << "\n";
  }
}

// Why a failed node is drained: its first reason, quoted for scontrol.
std::string drain_reason(const accept::Rollup& n) { return quoted(n.reasons.empty() ? "failed" : n.reasons.front()); }

// The scontrol line that drains each failed node. A failure between nodes names no one node to
// drain, unless the bisection named it (then it is that node's failure too).
std::vector<std::string> drain_lines(const std::vector<accept::Rollup>& per_node) {
  std::vector<std::string> drains;
  for (const accept::Rollup& n : per_node)
    if (n.outcome == "fail" && !n.host.empty())
      drains.push_back("scontrol update nodename=" + n.host +
                       " state=drain reason=\"scalebench accept: " + drain_reason(n) + "\"");
  return drains;
}

// --drain: runs scontrol for each failed node, saying whether it worked.
void drain_failed_nodes(const std::vector<accept::Rollup>& per_node) {
  for (const accept::Rollup& n : per_node) {
    if (n.outcome != "fail" || n.host.empty()) continue;
    ChildProcess p = ChildProcess::spawn(
        {"scontrol", "update", "nodename=" + n.host, "state=drain", "reason=scalebench accept: " + drain_reason(n)},
        {});
    const int rc = p.wait();
    std::cout << "drained " << n.host << (rc == 0 ? "" : " FAILED (scontrol exited " + std::to_string(rc) + ")")
              << "\n";
  }
}

// The battery, verdicts and outputs against a coordinator. Returns the exit code. In phases, each
// taking what the one before gave: the plan, the runs, the verdicts (the bisection last, since it
// starts from the verdicts and adds its own), then the outputs, which all say the same verdicts:
// --drain last, as the one that acts on the cluster, once everything has been printed.
int accept_on(HttpClient& client, const Options& o, const std::function<void()>& check_alive) {
  const Battery battery = plan_battery(client, o);
  BatteryRunner runner(client, check_alive);
  const std::vector<ItemOutcome> outcomes = run_battery(client, runner, o, battery.items);
  std::vector<accept::Verdict> verdicts = judge(o, outcomes);
  const std::optional<accept::BisectOutcome> bisection = bisect_slow_collective(runner, o, battery, verdicts);

  const std::vector<accept::Rollup> per_node = accept::node_rollup(verdicts);
  const std::vector<accept::Rollup> per_gpu = accept::gpu_rollup(verdicts);
  print_verdicts(verdicts, per_node);
  store_verdicts(client, o, verdicts);
  const std::vector<std::string> drains = drain_lines(per_node);
  if (!drains.empty()) std::cout << "\nto drain the failed nodes:\n";
  for (const std::string& d : drains) std::cout << "  " << d << "\n";
  if (!o.json_file.empty()) {
    std::ofstream(o.json_file) << verdicts_json(o.level.name, verdicts, per_node, per_gpu, bisection, drains).dump(2)
                               << "\n";
    std::cout << "verdicts in " << o.json_file << "\n";
  }
  if (o.drain) drain_failed_nodes(per_node);
  const bool any_fail =
      std::any_of(per_node.begin(), per_node.end(), [](const accept::Rollup& n) { return n.outcome == "fail"; });
  return any_fail ? 1 : 0;
}

}  // namespace

int cmd_accept(const CliArgs& a) {
  const Options o = read_options(a);  // bad input (rules, baseline, level) stops here: exit 2
  catch_interrupts();
  auto check_interrupt = [] {
    if (interrupted()) throw Interrupted("interrupted: the battery's open experiments were cancelled");
  };
  if (a.options.count("coordinator") || std::getenv("SCALEBENCH_COORDINATOR")) {
    HttpClient client = coordinator_client(a);
    return accept_on(client, o, check_interrupt);
  }
  const std::string db = a.opt("db", "accept.db");
  LocalCluster cluster(db, a.opt("logs", db + ".logs"));
  HttpClient client(cluster.url(), std::chrono::seconds(10));
  client.set_bearer_token(cluster.user_token());
  return accept_on(client, o, [&cluster, &check_interrupt] {
    check_interrupt();
    if (auto dead = cluster.dead_child()) throw Error(*dead);
  });
}

}  // namespace scalebench

namespace scalebench {

const char* accept_help() {
  return R"(usage: scalebench accept [--level quick|standard|long] [--rules FILE] [--baseline FILE] [--json FILE]
                         [--drain] [--coordinator URL | --db FILE [--logs DIR]]

Runs the acceptance battery on every alive agent, judges each record by rules, and says which GPU
and which node to take out of service, and why.

Where it runs:
  --coordinator URL   every alive agent of a running coordinator (a cluster, or a SLURM allocation
                      started with deploy/slurm/scalebench.sbatch); also $SCALEBENCH_COORDINATOR
  (neither)           standalone on this machine: a local coordinator and agent, store --db FILE
                      (default accept.db), logs --logs DIR

Levels (time bound per node; nodes run at the same time):
  quick     <= 1 min   NVML configuration checks, GEMM bf16, HBM bandwidth, host<->GPU copies,
                       all-reduce inside the node, checksum, all-reduce between the nodes
  standard  <= 5 min   + GEMM fp32/tf32/fp16/fp8, peer copies, 30 s GEMM and HBM burn
  long      <= 20 min  + GEMM fp64/fp8e5m2/int8 (every precision), 300 s GEMM and HBM burns, a 30 s
                       NVLink error-counter watch, the checksum on 8192^3 run 20 times
  A node without GPUs runs the configuration check only; the all-reduce between nodes runs on
  host memory when any node has no GPU. Workloads this build lacks are left out, and named.

Verdicts: every rule (deploy/accept/rules.yaml, built in; --rules FILE overrides a rule of the
same name, `disabled: true` drops it, new names add) gives pass, warn or fail with the measured
value and its expected band: from the record's peak x the GPU model's efficiency (scaled to the
clock it observed), the fleet (median and k x MAD over GPUs of the same model), a baseline run
(--baseline FILE: `scalebench results --format json` output), or fixed limits. A model with no
efficiency and no default warns "no band known"; it never passes silently. Checksums and versions
are judged by majority: the GPU that disagrees with the most of its model fails. Under the burns,
a GPU whose SM clock settles lower or falls further than its peers' fails; with fewer than 3 GPUs
of its model, each is held to its own maximum clock (>= 70%) and to where its clock started (>= 90%).
When the all-reduce between nodes is below its band, halves and then pairs of nodes are measured
until one node is named (log2(nodes) steps).

Outputs: a table per node, each failing or warning check with its rule, value and band;
--json FILE (every verdict, per GPU and node, the bisection's steps, the drain lines); a line
  scontrol update nodename=NODE state=drain reason="scalebench accept: ..."
per failed node, run by --drain. A node that dies or hangs fails with the reason; the others
keep their verdicts. The verdicts go to the coordinator too: scalebench_node_health{Hostname,
gpu, check} on its /metrics (1 pass, 0.5 warn, 0 fail; newest battery wins, kept across
restarts), and `scalebench report` shows a battery's verdicts per node and GPU.
Exit codes: 0 every node passed (warnings allowed), 1 a check failed, 2 bad input (a bad rule
file names file:line:column and the field), 4 the coordinator could not be reached, 130
interrupted (Ctrl-C or SIGTERM): the battery's experiments still open are cancelled first, so none
is left to hold the nodes.
Rules and levels against DCGM's diagnostics, SuperBench and nccl-tests: docs/accept.md.
)";
}

}  // namespace scalebench
