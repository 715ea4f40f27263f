#include <algorithm>
#include <regex>
#include <tuple>

#include "accept/default_rules.hpp"
#include "accept/verdict.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

namespace scalebench::sections {

namespace {

// The battery an experiment belongs to ("accept-1764241200"), or "" when it is none of a
// battery's items (`scalebench accept` names them TAG-N-NODE and TAG-allnodes). The bisection's
// runs (TAG-bisect-N) measure groups of nodes, not a node: they are not judged here.
std::string battery_of(const std::string& experiment) {
  static const std::regex item(R"((accept-[0-9]+)-(.+))");
  std::smatch m;
  if (!std::regex_match(experiment, m, item) || m[2].str().rfind("bisect-", 0) == 0) return "";
  return m[1].str();
}

// A run that failed or timed out measured nothing to judge: its node fails, as the command has it.
accept::Verdict run_failure(const Json& r) {
  const RecordView record(r);
  accept::Verdict v;
  v.host = record.host();
  v.check = record.workload + " (run " + r["run_id"].dump() + ")";
  v.rule = "battery-completes";
  v.rule_where = "scalebench accept";
  v.outcome = "fail";
  v.reason = record.status + ": " + record.reason;
  return v;
}

std::string band_text(const accept::Band& b) {
  if (!b.known()) return "";
  return "[" + (b.lo ? format_number(*b.lo) : std::string("-")) + ", " +
         (b.hi ? format_number(*b.hi) : std::string("-")) + "] " + b.basis;
}

std::string node_name(const std::string& host) { return host.empty() ? "(between nodes)" : host; }

Section battery_section(const std::string& tag, const std::vector<const Json*>& records) {
  static const accept::RuleSet rules = accept::parse_rules(accept::kDefaultRules, accept::kDefaultRulesSource);
  std::vector<Json> judged;
  std::vector<accept::Verdict> failures;
  for (const Json* r : records) {
    const std::string metric = r->value("metric", ""), status = r->value("status", "");
    if (metric != "run" || status == "skipped")
      judged.push_back(*r);
    else if (status == "failed" || status == "timeout")
      failures.push_back(run_failure(*r));
  }
  std::vector<accept::Verdict> verdicts = accept::evaluate(rules, judged);
  verdicts.insert(verdicts.end(), failures.begin(), failures.end());
  std::stable_sort(verdicts.begin(), verdicts.end(), [](const accept::Verdict& a, const accept::Verdict& b) {
    return std::tie(a.host, a.gpu) < std::tie(b.host, b.gpu);
  });

  Section sec;
  sec.id = "acceptance-" + id_safe(tag);
  sec.title = "Acceptance battery " + tag;
  sec.paragraphs.push_back(
      "The battery's records judged by the shipped rules (deploy/accept/rules.yaml): per node and GPU, pass, warn "
      "or fail with the rule, the measured value and the expected band. A run of scalebench accept with its own "
      "--rules or --baseline judged by those; its --json output is what it decided. Nodes are named by the host "
      "their runs were placed on.");
  Table nodes = make_table(
      sec.id + "-nodes", "Verdicts per node", "the worst verdict of the node's checks",
      {{"node", false}, {"verdict", false}, {"pass", true}, {"warn", true}, {"fail", true}, {"first reason", false}});
  for (const accept::Rollup& n : accept::node_rollup(verdicts)) {
    int count[3] = {0, 0, 0};
    for (const accept::Verdict& v : verdicts)
      if (v.host == n.host) {
        count[0] += v.outcome == "pass";
        count[1] += v.outcome == "warn";
        count[2] += v.outcome == "fail";
      }
    nodes.rows.push_back({node_name(n.host), n.outcome, std::to_string(count[0]), std::to_string(count[1]),
                          std::to_string(count[2]), n.reasons.empty() ? "" : n.reasons.front()});
  }
  Table checks = make_table(sec.id + "-checks", "Verdicts per GPU and check",
                            "the GPU is empty for a check of the node as a whole; the band is [low, high] and how it "
                            "was found",
                            {{"node", false},
                             {"gpu", true},
                             {"check", false},
                             {"rule", false},
                             {"verdict", false},
                             {"value", true},
                             {"unit", false},
                             {"band", false},
                             {"reason", false}});
  for (const accept::Verdict& v : verdicts) {
    if (v.outcome == "skip") continue;
    checks.rows.push_back({node_name(v.host), v.gpu < 0 ? "" : std::to_string(v.gpu), v.check, v.rule, v.outcome,
                           v.value ? format_number(*v.value) : "", v.unit, band_text(v.band),
                           v.outcome == "pass" ? "" : v.reason});
  }
  sec.tables.push_back(std::move(nodes));
  sec.tables.push_back(std::move(checks));
  return sec;
}

}  // namespace

std::vector<Section> acceptance(const std::vector<std::string>& names,
                                const std::map<std::string, std::vector<const Json*>>& by_exp) {
  std::vector<std::string> tags;
  std::map<std::string, std::vector<const Json*>> by_battery;
  for (const std::string& name : names) {
    const std::string tag = battery_of(name);
    if (tag.empty()) continue;
    if (!by_battery.count(tag)) tags.push_back(tag);
    auto& list = by_battery[tag];
    list.insert(list.end(), by_exp.at(name).begin(), by_exp.at(name).end());
  }
  std::vector<Section> out;
  for (const std::string& tag : tags) out.push_back(battery_section(tag, by_battery.at(tag)));
  return out;
}

}  // namespace scalebench::sections
