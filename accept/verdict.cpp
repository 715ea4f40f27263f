#include "accept/verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "accept/rule_selection.hpp"
#include "record/record_reader.hpp"

namespace scalebench::accept {

namespace {

const std::map<std::string, int>& rank() {
  static const std::map<std::string, int> r{{"skip", 0}, {"pass", 1}, {"warn", 2}, {"fail", 3}};
  return r;
}

std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The point as a band compares it: the `match` fields, else the whole identity.
std::string same_point(const Rule& rule, const Json& r) {
  if (!rule.band || rule.band->match.empty()) return point_identity(r).dump();
  Json p = Json::object();
  for (const std::string& k : rule.band->match) p[k] = field_at(r, "point." + k);
  return p.dump();
}

std::string baseline_key(const Rule& rule, const Json& r) {
  const RecordView v(r);
  return v.workload + "|" + v.metric + "|" + same_point(rule, r);
}

Verdict base(const Rule& rule, const Json& r) {
  const RecordView record(r);
  Verdict v;
  v.host = record.host();
  v.gpu = record.gpu();
  v.model = record.model();
  v.check = check_label(r);
  v.rule = rule.name;
  v.rule_where = rule.where;
  v.unit = record.unit;
  v.value = record.value;
  return v;
}

// A record that measured nothing: judged by the rule's on_skipped.
Verdict not_measured(const Rule& rule, const Json& r) {
  Verdict v = base(rule, r);
  v.outcome = rule.on_skipped;
  const RecordView record(r);
  v.reason = record.status + ": " + record.reason;
  return v;
}

// What held the GPU's clocks down while it measured (details.clock_limits: NVML's power and
// thermal violation time), for the reason of a value out of its band: "" when nothing did.
std::string clock_limit_note(const Json& r) {
  const Json c = field_at(r, "details.clock_limits");
  const double window = c.is_object() ? c.value("window_ms", 0.0) : 0.0;
  if (window <= 0) return "";
  std::string note;
  for (const auto& [key, name] : {std::pair{"power_capped_ms", "power"}, std::pair{"thermal_capped_ms", "thermal"}}) {
    const double share = c.value(key, 0.0) / window;
    if (share >= 0.01) note += std::string(note.empty() ? "" : ", ") + name + " limit " + num_text(100 * share) + "%";
  }
  return note.empty() ? "; no power or thermal limit held the clocks" : "; clocks held by the " + note + " of the time";
}

Verdict banded(const Rule& rule, const Json& r, const std::vector<double>& peers,
               const std::optional<double>& baseline) {
  Verdict v = base(rule, r);
  v.band = band_for(*rule.band, r, peers, baseline);
  if (!v.band.known()) {
    v.outcome = "warn";  // never a silent pass
    v.reason = v.band.basis;
    return v;
  }
  const double x = *v.value;
  if (v.band.lo && x < *v.band.lo) {
    v.outcome = rule.severity;
    v.reason = num_text(x) + " " + v.unit + " is below " + num_text(*v.band.lo);
  } else if (v.band.hi && x > *v.band.hi) {
    v.outcome = rule.severity;
    v.reason = num_text(x) + " " + v.unit + " is above " + num_text(*v.band.hi);
  } else {
    v.outcome = "pass";
  }
  if (v.outcome != "pass") v.reason += clock_limit_note(r);
  return v;
}

}  // namespace

const std::string& worse(const std::string& a, const std::string& b) {
  const auto ra = rank().count(a) ? rank().at(a) : 3, rb = rank().count(b) ? rank().at(b) : 3;
  return ra >= rb ? a : b;
}

Json point_identity(const Json& r) {
  Json p = RecordView(r).point();
  for (const char* k : {"host", "gpu", "uuid", "model"}) p.erase(k);
  return p;
}

std::string check_label(const Json& r) {
  const RecordView record(r);
  std::string label = record.workload + "." + record.metric;
  const Json point = point_identity(r);  // named: items() only refers to it
  for (const auto& [k, v] : point.items()) {
    if (k == "check") continue;
    label += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return label;
}

std::vector<Verdict> evaluate(const RuleSet& rules, const std::vector<Json>& records,
                              const std::vector<Json>& baseline) {
  std::vector<Verdict> out;
  std::set<const Json*> run_records_judged;
  for (const Rule& rule : rules.rules) {
    std::map<std::string, std::vector<double>> base_values;
    for (const Json& r : baseline)
      if (const RecordView v(r); selects(rule, r) && v.ok() && v.value)
        base_values[baseline_key(rule, r)].push_back(*v.value);
    std::vector<const Json*> measured;
    for (const Json& r : records) {
      if (!selects(rule, r)) continue;
      if (const RecordView v(r); v.ok() && v.value) {
        measured.push_back(&r);
      } else if (v.is_figure() || run_records_judged.insert(&r).second) {
        out.push_back(not_measured(rule, r));
      }
    }
    if (!rule.agree.empty()) {
      for (Verdict& v : agreement(rule, measured)) out.push_back(std::move(v));
      continue;
    }
    // Fleet peers: the same point, from records of the same group.
    std::map<std::string, std::vector<double>> peers;
    for (const Json* r : measured)
      peers[group_key(rule, *r) + "|" + same_point(rule, *r)].push_back(*RecordView(*r).value);
    for (const Json* r : measured) {
      std::optional<double> b;
      if (auto it = base_values.find(baseline_key(rule, *r)); it != base_values.end()) b = median_of(it->second);
      out.push_back(banded(rule, *r, peers[group_key(rule, *r) + "|" + same_point(rule, *r)], b));
    }
  }
  return out;
}

namespace {
std::vector<Rollup> rollup(const std::vector<Verdict>& verdicts, bool per_gpu) {
  std::map<std::pair<std::string, int>, Rollup> by;
  for (const Verdict& v : verdicts) {
    if (per_gpu && v.gpu < 0) continue;
    const auto key = std::make_pair(v.host, per_gpu ? v.gpu : -1);
    Rollup& r = by[key];
    r.host = v.host;
    r.gpu = key.second;
    if (v.outcome == "skip") continue;
    r.outcome = worse(r.outcome, v.outcome);
    if (v.outcome == "fail" || v.outcome == "warn") r.reasons.push_back(describe(v));
  }
  std::vector<Rollup> out;
  for (auto& [k, r] : by) {
    // Failures first: the first reason is what a drain line and the table quote.
    std::stable_partition(r.reasons.begin(), r.reasons.end(),
                          [](const std::string& s) { return s.rfind("fail", 0) == 0; });
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

std::vector<Rollup> node_rollup(const std::vector<Verdict>& verdicts) { return rollup(verdicts, false); }
std::vector<Rollup> gpu_rollup(const std::vector<Verdict>& verdicts) { return rollup(verdicts, true); }

std::string describe(const Verdict& v) {
  std::string s = v.outcome + " " + v.check;
  if (v.gpu >= 0) s += " gpu " + std::to_string(v.gpu);
  s += " [" + v.rule + "]";
  if (!v.reason.empty()) s += ": " + v.reason;
  if (v.band.known())
    s += " (band [" + (v.band.lo ? num_text(*v.band.lo) : std::string("-")) + ", " +
         (v.band.hi ? num_text(*v.band.hi) : std::string("-")) + "]: " + v.band.basis + ")";
  return s;
}

Json to_json(const Verdict& v) {
  Json band = Json{{"lo", v.band.lo ? Json(*v.band.lo) : Json()},
                   {"hi", v.band.hi ? Json(*v.band.hi) : Json()},
                   {"basis", v.band.basis}};
  return Json{{"host", v.host},       {"gpu", v.gpu},
              {"model", v.model},     {"check", v.check},
              {"rule", v.rule},       {"rule_at", v.rule_where},
              {"outcome", v.outcome}, {"value", v.value ? Json(*v.value) : Json()},
              {"unit", v.unit},       {"band", band},
              {"reason", v.reason}};
}

Json to_json(const Rollup& r) {
  Json j{{"host", r.host}, {"outcome", r.outcome}, {"reasons", r.reasons}};
  if (r.gpu >= 0) j["gpu"] = r.gpu;
  return j;
}

}  // namespace scalebench::accept
