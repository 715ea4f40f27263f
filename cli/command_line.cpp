#include "cli/command_line.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

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

// The options of the command being declared, and where their values land.
class CommandBuilder {
 public:
  CommandBuilder(CLI::App& app, std::map<std::string, std::string>& values) : app_(app), values_(values) {}

  CLI::App* command(const std::string& name, const std::string& purpose, const std::string& examples) {
    sub_ = app_.add_subcommand(name, purpose);
    sub_->footer("Examples:\n" + examples);
    sub_->fallthrough();  // --log-level may come after the command
    return sub_;
  }
  CLI::Option* value(const std::string& name, const std::string& type, const std::string& help) {
    return sub_->add_option("--" + name, values_[name], help)->type_name(type);
  }
  CLI::Option* format(const std::string& what) {
    return value("format", "FORMAT", "print " + what + " as table (default), json or csv")
        ->check(CLI::IsMember({"table", "json", "csv"}));
  }
  void coordinator(bool or_db) {
    auto* c = value("coordinator", "URL", "the coordinator to ask (default $SCALEBENCH_COORDINATOR)");
    value("token-file", "FILE", "a file holding the bearer token (default $SCALEBENCH_TOKEN)");
    value("ca-file", "FILE", "trust the certificates in FILE for an https:// coordinator");
    if (or_db) c->excludes(value("db", "FILE", "read this store file instead of asking a coordinator"));
  }

 private:
  CLI::App& app_;
  std::map<std::string, std::string>& values_;
  CLI::App* sub_ = nullptr;
};

void declare_commands(CommandBuilder& b, std::vector<std::string>& positional) {
  auto* c =
      b.command("study", "Run an experiment standalone on this machine (a local coordinator and agent on loopback)",
                "  scalebench study examples/quick.yaml\n"
                "  scalebench study nccl-sweep.yaml --db sweep.db --logs sweep-logs\n");
  c->add_option("FILE", positional, "the experiment YAML (several separated by --- lines run one by one)")
      ->required()
      ->expected(1);
  b.value("db", "FILE", "store the results here (default scalebench.db)");
  b.value("logs", "DIR", "the runs' logs (default FILE.logs)");

  c = b.command("submit", "Queue an experiment on a running coordinator",
                "  scalebench submit nccl-sweep.yaml --coordinator http://head:8470\n"
                "  generate-study | scalebench submit - --format json\n");
  c->add_option("FILE", positional, "the experiment YAML, - for standard input")->required()->expected(1);
  b.coordinator(false);
  b.format("the submitted experiment");

  c = b.command("status", "Progress of every experiment, or of one",
                "  scalebench status\n"
                "  scalebench status nccl-sweep --format json\n"
                "  scalebench status --db scalebench.db\n");
  c->add_option("EXPERIMENT", positional, "an experiment's name or id (default: all)")->expected(0, 1);
  b.coordinator(true);
  b.format("the experiments");

  c = b.command("wait", "Block until an experiment has ended, printing each change of its state",
                "  scalebench wait 12 --timeout 3600\n"
                "  id=$(scalebench submit s.yaml --format csv | tail -n 1 | cut -d, -f1) && scalebench wait $id\n");
  c->footer(c->get_footer() +
            "Exit codes: 0 every run ok; 1 a reference failed; 3 runs failed, timed out or were cancelled,\n"
            "or --timeout passed first; 4 the coordinator could not be reached.\n");
  c->add_option("EXPERIMENT", positional, "an experiment's name or id")->required()->expected(1);
  b.value("timeout", "SECONDS", "give up (exit 3) after this long (default: wait for ever)");
  b.value("interval", "SECONDS", "how often to ask the coordinator (default 2)");
  b.coordinator(false);

  c = b.command("results", "Every record of one or every experiment",
                "  scalebench results --experiment nccl-sweep --format csv > sweep.csv\n"
                "  scalebench results --db scalebench.db --format json > records.jsonl\n");
  b.value("experiment", "NAME|ID", "only this experiment's records");
  b.coordinator(true);
  b.format("the records (json: one record a line)");

  c = b.command("ratio", "A/B ratio per point (default nvlink/pcie on busbw) with a 95% confidence interval",
                "  scalebench ratio --experiment nvlink-vs-pcie\n"
                "  scalebench ratio --variants fp16,fp32 --metric throughput --ignore-params dtype\n");
  b.value("experiment", "NAME|ID", "the experiment (default: all)");
  b.value("variants", "A,B", "numerator and denominator variants (default nvlink,pcie)");
  b.value("metric", "M", "the metric to compare (default busbw)");
  b.value("ignore-params", "P,Q", "parameters that differ between the variants and do not split points");
  b.coordinator(true);
  b.format("the ratios");

  c = b.command("report", "An HTML page with charts, Markdown, CSV, JSON and PNG charts of the results in one folder",
                "  scalebench report --experiment nccl-sweep --out report/\n"
                "  scalebench results --format json | scalebench report --records - --title 'cluster A'\n"
                "  scalebench report --experiment nccl-today --overlay nccl-monday,nccl-tuesday\n"
                "  scalebench report --db new.db --baseline golden.jsonl --out report/\n");
  c->footer(c->get_footer() +
            "\nThe page is one file that works offline: it inlines Chart.js from Debian's libjs-chart.js\n"
            "(/usr/share/javascript/chart.js/chart.min.js, or $SCALEBENCH_CHART_JS) for charts with hover values,\n"
            "zoom and series toggles; each chart's SVG stays in the page for browsers without scripts.\n"
            "A scaling model drawn beyond fewer than 3 measured counts, or from a fit with R² under 0.9, is\n"
            "marked as a guess in its chart, the model table and the text.\n");
  b.value("experiment", "NAME|ID", "only this experiment (default: all)");
  b.value("out", "DIR", "the folder to write (default report/)");
  b.value("title", "TEXT", "the page's title");
  b.value("records", "FILE", "read `results --format json` output instead (- = standard input)");
  b.value("overlay", "NAME|ID,...",
          "draw these experiments' collective and throughput curves over the report's, dashed, named after "
          "them; without --experiment they get no section of their own");
  b.value("baseline", "FILE",
          "draw the records of `results --format json` output (a known-good run) over the report's, dashed, "
          "as 'baseline: ...'");
  b.coordinator(true);

  c = b.command("compare", "Each metric's change per point between two experiments, or against a saved baseline",
                "  scalebench compare last-week this-week\n"
                "  scalebench compare nightly --baseline golden.jsonl --tolerance 3\n"
                "  scalebench compare a b --outliers --format json\n");
  c->footer(c->get_footer() + "Exit codes: 1 a regression beyond the tolerance and the noise; 3 no point in both.\n");
  c->add_option("EXPERIMENTS", positional, "BASELINE CANDIDATE, or CANDIDATE with --baseline")->expected(1, 2);
  b.value("baseline", "FILE", "`results --format json` output to compare against");
  b.value("tolerance", "PCT", "a change beyond this is a regression (default 5; a reference's wins)");
  b.value("metric", "M", "only this metric");
  b.value("ignore-params", "P,Q", "parameters that do not split points");
  c->add_flag("--outliers")->description("also list hosts far from the median of their peers");
  b.value("outlier-threshold", "PCT", "how far from the median an outlier is (default 10)");
  b.coordinator(true);
  b.format("the changes");

  c = b.command("accept", "The acceptance battery on every agent: a verdict per GPU and node, and which node to drain",
                "  scalebench accept --level quick\n"
                "  scalebench accept --coordinator http://head:8470 --json verdicts.json --drain\n");
  b.value("level", "LEVEL", "quick, standard (default) or long")->check(CLI::IsMember({"quick", "standard", "long"}));
  b.value("rules", "FILE", "rules that override or add to the built-in ones");
  b.value("baseline", "FILE", "`results --format json` output of a known-good run to judge against");
  b.value("json", "FILE", "write every verdict here");
  c->add_flag("--drain")->description("run the scontrol line that drains each failed node");
  b.value("logs", "DIR", "the runs' logs when standalone");
  b.coordinator(true);
  c->footer(std::string("\n") + accept_help() + "\n" + c->get_footer());

  c = b.command("agents", "The agents registered with the coordinator, their GPUs and runs",
                "  scalebench agents\n"
                "  scalebench agents --format json | jq '.[] | select(.state == \"alive\") | .id'\n");
  b.coordinator(false);
  b.format("the agents");

  c = b.command("cancel", "Cancel an experiment's queued runs and stop its running ones",
                "  scalebench cancel nccl-sweep\n"
                "  scalebench cancel 12 --coordinator https://head:8470 --format json\n");
  c->add_option("EXPERIMENT", positional, "an experiment's name or id")->required()->expected(1);
  b.coordinator(false);
  b.format("what was cancelled");

  b.command("version", "Print the version and the git revision", "  scalebench version\n");
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
  CommandBuilder builder(app, values);
  declare_commands(builder, args.positional);
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
