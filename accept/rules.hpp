#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench::accept {

// How a rule's expected band is found (docs/accept.md#rules).
struct BandSpec {
  // peak:     the record's own peak (`peak.value`, or `link.peak_GBps`) x the GPU model's efficiency,
  //           scaled down to the SM clock the record observed where it says so;
  // fleet:    the median of the same point over the GPUs of the same model, +- max(k x MAD,
  //           tolerance x median);
  // baseline: `fraction` x the same point's value in a named baseline run (--baseline FILE);
  // fixed:    min and/or max;
  // relative: min_fraction / max_fraction x a field of the record itself (`field`, "details.max").
  std::string from;
  std::map<std::string, double> efficiency;  // model name part ("H100") -> efficiency; "default"
  double k = 5, tolerance = 0;
  int min_group = 3;
  double fraction = 0.9;
  std::optional<double> min, max;
  std::string field;
  std::optional<double> min_fraction, max_fraction;
  // The point fields that make two records "the same point" for fleet and baseline bands; empty:
  // the whole point but who measured it (collectives: [size], since iters and busbw_factor vary).
  std::vector<std::string> match;
  // fleet only: the band of a record with fewer than min_group peers (a GPU alone on its node,
  // or the only one of its model), judged against itself instead of warning "no band known".
  std::shared_ptr<const BandSpec> alone;
};

struct Rule {
  std::string name;
  std::string where;  // "file:line" of its definition, for verdicts and messages
  // Which records it judges: workload, metric, and point fields that must be equal.
  std::string workload, metric;
  Json point = Json::object();
  std::string severity = "fail";    // what a value outside the band gives: fail | warn
  std::string on_skipped = "warn";  // what a skipped or failed record gives: skip | warn | fail
  std::optional<BandSpec> band;
  // Instead of a band: the records must agree on this field ("details.checksum"); within each
  // group (group_by), the majority value wins and a record that differs gets `severity`.
  std::string agree;
  std::vector<std::string> group_by{"model"};  // model, host, gpu, or point.<field>
  bool disabled = false;                       // a site file switches a shipped rule off
};

struct RuleSet {
  std::vector<Rule> rules;
};

// Throws SpecError naming file:line:column and the field (e.g. `rules[2].band.k`) for every problem.
RuleSet parse_rules(std::string_view yaml_text, std::string_view source_name);
RuleSet load_rules(const std::string& path);

// A site's rules over the shipped ones: a rule of the same name replaces it (`disabled: true`
// removes it), others are added.
RuleSet override_rules(const RuleSet& base, const RuleSet& site);

}  // namespace scalebench::accept
