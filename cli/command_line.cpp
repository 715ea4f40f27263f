#include "cli/command_line.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/program_options.hpp"

namespace scalebench {

namespace {

const char* kOverview = R"(Exit codes: 0 ok; 1 a reference failed (compare: a regression; accept: a check failed);
2 bad usage or input; 3 runs failed or timed out; 4 the coordinator could not be reached or
refused; 5 `results --db` read a damaged store in part.
The coordinator URL is --coordinator, else $SCALEBENCH_COORDINATOR, else http://127.0.0.1:8470;
it may be IPv6 (http://[::1]:8470) or carry a path prefix (https://proxy/scalebench). Tokens come
from --token-file FILE, else $SCALEBENCH_TOKEN; an https:// certificate is checked against
--ca-file FILE, else $SCALEBENCH_CA_FILE, else the system's trusted certificates.
Each command has its own help: scalebench COMMAND --help.)";

// An option of a command: --NAME TYPE, or a flag where `type` is empty.
struct OptionDecl {
  std::string name, type, help;
  std::vector<std::string> choices = {};
};

// A command's positional argument, given min..max times; none where `name` is empty.
struct ArgumentDecl {
  std::string name, help;
  int min = 1, max = 1;
  bool required = true;
};

// Where a command reads: nowhere, a coordinator, or a coordinator or a store file (--db).
enum class ReadsFrom { kNone, kCoordinator, kCoordinatorOrDb };

// A command as its --help shows it. Its options come first, then the coordinator's, then --format.
struct CommandDecl {
  std::string name, purpose, examples;
  ArgumentDecl argument = {};
  std::vector<OptionDecl> options = {};
  ReadsFrom source = ReadsFrom::kNone;
  std::string format = {};  // what --format prints; empty: no --format
  std::string before_examples = {}, after_examples = {};
};

const ArgumentDecl kNoArgument{"", "", 0, 0, false};
const ArgumentDecl kExperiment{"EXPERIMENT", "an experiment's name or id"};

CommandDecl study_decl() {
  return {"study",
          "Run an experiment standalone on this machine (a local coordinator and agent on loopback)",
          "  scalebench study examples/quick.yaml\n"
          "  scalebench study nccl-sweep.yaml --db sweep.db --logs sweep-logs\n",
          {"FILE", "the experiment YAML (several separated by --- lines run one by one)"},
          {{"db", "FILE", "store the results here (default scalebench.db)"},
           {"logs", "DIR", "the runs' logs (default FILE.logs)"}}};
}

CommandDecl submit_decl() {
  return {"submit",
          "Queue an experiment on a running coordinator",
          "  scalebench submit nccl-sweep.yaml --coordinator http://head:8470\n"
          "  generate-study | scalebench submit - --format json\n",
          {"FILE", "the experiment YAML, - for standard input"},
          {},
          ReadsFrom::kCoordinator,
          "the submitted experiment"};
}

CommandDecl status_decl() {
  return {"status",
          "Progress of every experiment, or of one",
          "  scalebench status\n"
          "  scalebench status nccl-sweep --format json\n"
          "  scalebench status --db scalebench.db\n",
          {"EXPERIMENT", "an experiment's name or id (default: all)", 0, 1, false},
          {},
          ReadsFrom::kCoordinatorOrDb,
          "the experiments"};
}

CommandDecl wait_decl() {
  return {"wait",
          "Block until an experiment has ended, printing each change of its state",
          "  scalebench wait 12 --timeout 3600\n"
          "  id=$(scalebench submit s.yaml --format csv | tail -n 1 | cut -d, -f1) && scalebench wait $id\n",
          kExperiment,
          {{"timeout", "SECONDS", "give up (exit 3) after this long (default: wait for ever)"},
           {"interval", "SECONDS", "how often to ask the coordinator (default 2)"}},
          ReadsFrom::kCoordinator,
          "",
          "",
          "Exit codes: 0 every run ok; 1 a reference failed; 3 runs failed, timed out or were cancelled,\n"
          "or --timeout passed first; 4 the coordinator could not be reached.\n"};
}

CommandDecl results_decl() {
  return {"results",
          "Every record of one or every experiment",
          "  scalebench results --experiment nccl-sweep --format csv > sweep.csv\n"
          "  scalebench results --db scalebench.db --format json > records.jsonl\n",
          kNoArgument,
          {{"experiment", "NAME|ID", "only this experiment's records"}},
          ReadsFrom::kCoordinatorOrDb,
          "the records (json: one record a line)"};
}

CommandDecl ratio_decl() {
  return {"ratio",
          "A/B ratio per point (default nvlink/pcie on busbw) with a 95% confidence interval",
          "  scalebench ratio --experiment nvlink-vs-pcie\n"
          "  scalebench ratio --variants fp16,fp32 --metric throughput --ignore-params dtype\n",
          kNoArgument,
          {{"experiment", "NAME|ID", "the experiment (default: all)"},
           {"variants", "A,B", "numerator and denominator variants (default nvlink,pcie)"},
           {"metric", "M", "the metric to compare (default busbw)"},
           {"ignore-params", "P,Q", "parameters that differ between the variants and do not split points"}},
          ReadsFrom::kCoordinatorOrDb,
          "the ratios"};
}

CommandDecl report_decl() {
  return {"report",
          "An HTML page with charts, Markdown, CSV, JSON and PNG charts of the results in one folder",
          "  scalebench report --experiment nccl-sweep --out report/\n"
          "  scalebench results --format json | scalebench report --records - --title 'cluster A'\n"
          "  scalebench report --experiment nccl-today --overlay nccl-monday,nccl-tuesday\n"
          "  scalebench report --db new.db --baseline golden.jsonl --out report/\n",
          kNoArgument,
          {{"experiment", "NAME|ID", "only this experiment (default: all)"},
           {"out", "DIR", "the folder to write (default report/)"},
           {"title", "TEXT", "the page's title"},
           {"records", "FILE", "read `results --format json` output instead (- = standard input)"},
           {"overlay", "NAME|ID,...",
            "draw these experiments' collective and throughput curves over the report's, dashed, named after "
            "them; without --experiment they get no section of their own"},
           {"baseline", "FILE",
            "draw the records of `results --format json` output (a known-good run) over the report's, dashed, "
            "as 'baseline: ...'"}},
          ReadsFrom::kCoordinatorOrDb,
          "",
          "",
          "\nThe page is one file that works offline: it inlines Chart.js from Debian's libjs-chart.js\n"
          "(/usr/share/javascript/chart.js/chart.min.js, or $SCALEBENCH_CHART_JS) for charts with hover values,\n"
          "zoom and series toggles; each chart's SVG stays in the page for browsers without scripts.\n"
          "A scaling model drawn beyond fewer than 3 measured counts, or from a fit with R² under 0.9, is\n"
          "marked as a guess in its chart, the model table and the text.\n"};
}

CommandDecl compare_decl() {
  return {"compare",
          "Each metric's change per point between two experiments, or against a saved baseline",
          "  scalebench compare last-week this-week\n"
          "  scalebench compare nightly --baseline golden.jsonl --tolerance 3\n"
          "  scalebench compare gpu-regression-gemm-fp16 --baseline accepted.jsonl.gz --db gr.db\n"
          "  scalebench compare a b --outliers --format json\n",
          {"EXPERIMENTS", "BASELINE CANDIDATE, or CANDIDATE with --baseline", 1, 2, false},
          {{"baseline", "FILE",
            "`results --format json` output to compare against, plain or gzipped; a whole study's file is "
            "narrowed to the candidate's experiment"},
           {"tolerance", "PCT", "a change beyond this is a regression (default 5; a reference's wins)"},
           {"metric", "M", "only this metric"},
           {"ignore-params", "P,Q", "parameters that do not split points"},
           {"outliers", "", "also list hosts far from the median of their peers"},
           {"outlier-threshold", "PCT", "how far from the median an outlier is (default 10)"}},
          ReadsFrom::kCoordinatorOrDb,
          "the changes",
          "",
          "Exit codes: 1 a regression beyond the tolerance and the noise; 3 no point in both.\n"};
}

CommandDecl accept_decl() {
  return {"accept",
          "The acceptance battery on every agent: a verdict per GPU and node, and which node to drain",
          "  scalebench accept --level quick\n"
          "  scalebench accept --coordinator http://head:8470 --json verdicts.json --drain\n",
          kNoArgument,
          {{"level", "LEVEL", "quick, standard (default) or long", {"quick", "standard", "long"}},
           {"rules", "FILE", "rules that override or add to the built-in ones"},
           {"baseline", "FILE", "`results --format json` output of a known-good run to judge against"},
           {"json", "FILE", "write every verdict here"},
           {"drain", "", "run the scontrol line that drains each failed node"},
           {"logs", "DIR", "the runs' logs when standalone"}},
          ReadsFrom::kCoordinatorOrDb,
          "",
          std::string("\n") + accept_help() + "\n"};
}

CommandDecl predict_decl() {
  return {"predict",
          "Predict collective busbw at a node count not measured yet, from an experiment measured at 2 or more; the "
          "coordinator keeps the prediction and scores it when a run lands at that count",
          "  scalebench predict --experiment predict-allreduce-2-3 --nodes 4\n"
          "  scalebench predict --experiment allreduce-2n,allreduce-3n --nodes 8 --format json\n",
          kNoArgument,
          {{"experiment", "NAME|ID,...",
            "the experiment(s) to fit on: together their ok records span 2 node counts or more"},
           {"nodes", "N", "the node count to predict"}},
          ReadsFrom::kCoordinator,
          "the predictions",
          "",
          "\nPer op, variant and params (measurement parameters aside), a ring model is fitted on every\n"
          "size at every measured node count: t(n, S) = steps(n)*a + factor(n)*S/B, n the collective's\n"
          "ranks, a the latency of a ring step, B the bus bandwidth. Its busbw at --nodes is kept by the\n"
          "coordinator with the records it came from. A run of the same series that starts later at\n"
          "--nodes scores it by itself: per size the measured busbw (median), the predicted one and the\n"
          "error (predicted - measured) / measured; the goal is within 10% from 1 MiB up. See them with\n"
          "`scalebench predictions` and in `scalebench report` (docs/predictions.md).\n"};
}

CommandDecl predictions_decl() {
  return {"predictions",
          "The predictions the coordinator keeps, each with how it scored against the runs at its node count",
          "  scalebench predictions\n"
          "  scalebench predictions 3 --format csv\n"
          "  scalebench predictions --db scalebench.db --format json\n",
          {"PREDICTION", "a prediction's id (default: all)", 0, 1, false},
          {},
          ReadsFrom::kCoordinatorOrDb,
          "the predictions and their scores"};
}

CommandDecl agents_decl() {
  return {"agents",
          "The agents registered with the coordinator, their GPUs and runs",
          "  scalebench agents\n"
          "  scalebench agents --format json | jq '.[] | select(.state == \"alive\") | .id'\n",
          kNoArgument,
          {},
          ReadsFrom::kCoordinator,
          "the agents"};
}

CommandDecl cancel_decl() {
  return {"cancel",
          "Cancel an experiment's queued runs and stop its running ones",
          "  scalebench cancel nccl-sweep\n"
          "  scalebench cancel 12 --coordinator https://head:8470 --format json\n",
          kExperiment,
          {},
          ReadsFrom::kCoordinator,
          "what was cancelled"};
}

// Run by main() before this parser sees it: its commands and options are its own.
CommandDecl testbed_decl() {
  return {"testbed",
          "Rehearse a cluster on this machine: hosts in network namespaces with sshd, an agent and "
          "slurmd each, links shaped and cut on demand (scalebench testbed --help)",
          "  scalebench testbed up 3\n"
          "  scalebench testbed shape node2 --delay 2ms --loss 1%\n",
          kNoArgument};
}

CommandDecl version_decl() {
  return {"version", "Print the version and the git revision", "  scalebench version\n", kNoArgument};
}

// Every command, in the order --help lists them: running an experiment, then reading its results,
// then the cluster and the tools.
std::vector<CommandDecl> command_decls() {
  return {study_decl(),       submit_decl(), status_decl(),  wait_decl(),    results_decl(),
          ratio_decl(),       report_decl(), compare_decl(), accept_decl(),  predict_decl(),
          predictions_decl(), agents_decl(), cancel_decl(),  testbed_decl(), version_decl()};
}

// Declares `d` as a subcommand of `app`: its options' values land in `values`, its positional
// argument in `positional`.
void declare(CLI::App& app, const CommandDecl& d, std::map<std::string, std::string>& values,
             std::vector<std::string>& positional) {
  CLI::App* sub = app.add_subcommand(d.name, d.purpose);
  sub->footer(d.before_examples + "Examples:\n" + d.examples + d.after_examples);
  sub->fallthrough();  // --log-level may come after the command
  if (!d.argument.name.empty()) {
    CLI::Option* a = sub->add_option(d.argument.name, positional, d.argument.help);
    if (d.argument.required) a->required();
    a->expected(d.argument.min, d.argument.max);
  }
  auto value = [&](const std::string& name, const std::string& type, const std::string& help) {
    return sub->add_option("--" + name, values[name], help)->type_name(type);
  };
  for (const OptionDecl& o : d.options) {
    if (o.type.empty()) {
      sub->add_flag("--" + o.name)->description(o.help);
      continue;
    }
    CLI::Option* opt = value(o.name, o.type, o.help);
    if (!o.choices.empty()) opt->check(CLI::IsMember(o.choices));
  }
  if (d.source != ReadsFrom::kNone) {
    auto* c = value("coordinator", "URL", "the coordinator to ask (default $SCALEBENCH_COORDINATOR)");
    value("token-file", "FILE", "a file holding the bearer token (default $SCALEBENCH_TOKEN)");
    value("ca-file", "FILE", "trust the certificates in FILE for an https:// coordinator");
    if (d.source == ReadsFrom::kCoordinatorOrDb)
      c->excludes(value("db", "FILE", "read this store file instead of asking a coordinator"));
  }
  if (!d.format.empty())
    value("format", "FORMAT", "print " + d.format + " as table (default), json or csv")
        ->check(CLI::IsMember({"table", "json", "csv"}));
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CliArgs& args) {
  CLI::App app(
      "scalebench: distributed GPU benchmarks (NCCL collectives, GEMM, training) with a coordinator,\n"
      "agents, a result store, Prometheus metrics and reports.",
      "scalebench");
  app.footer(kOverview);
  app.require_subcommand(1);
  add_standard_options(app, "scalebench");
  std::map<std::string, std::string> values;
  for (const CommandDecl& d : command_decls()) declare(app, d, values, args.positional);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, "scalebench");
  }
  CLI::App* command = app.get_subcommands().front();
  args.command = command->get_name();
  for (const CLI::Option* o : command->get_options()) {
    if (o->count() == 0 || o->get_lnames().empty() || o->get_positional()) continue;
    const std::string name = o->get_lnames().front();
    if (name == "help") continue;
    args.options[name] = values.count(name) ? values[name] : "";  // a flag has no value
  }
  return std::nullopt;
}

}  // namespace scalebench
