#include "accept/rules.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "experiment/spec.hpp"

namespace scalebench::accept {

namespace {

// Walks a rule file, collecting every problem with its position (as common/spec.cpp does).
class RuleParser {
 public:
  explicit RuleParser(std::string source) : source_(std::move(source)) {}

  void issue(const YAML::Node& at, const std::string& field, const std::string& message) {
    const YAML::Mark m = at.Mark();
    issues_.push_back({source_, m.line + 1, m.column + 1, field, message});
  }

  // Every key of `map` must be one of `keys`; a key given twice is named too.
  void known_keys(const YAML::Node& map, const std::string& field, const std::set<std::string>& keys) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      const YAML::Node at = it->first;
      if (!seen.insert(key).second) issue(at, field + "." + key, "duplicate key; it was given earlier");
      if (keys.count(key)) continue;
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      issue(at, field + "." + key, "unknown key; expected one of: " + list);
    }
  }

  std::string text(const YAML::Node& n, const std::string& field, const std::set<std::string>& choices = {}) {
    if (!n.IsScalar() || n.Scalar().empty()) {
      issue(n, field, "expected a non-empty string");
      return "";
    }
    if (!choices.empty() && !choices.count(n.Scalar())) {
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      issue(n, field, "'" + n.Scalar() + "' is not one of: " + list);
    }
    return n.Scalar();
  }

  double number(const YAML::Node& n, const std::string& field, double lo, double hi) {
    double v = 0;
    if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !(v >= lo && v <= hi)) {
      std::ostringstream range;
      range << "expected a number in [" << lo << ", " << hi << "], got '" << (n.IsScalar() ? n.Scalar() : "?") << "'";
      issue(n, field, range.str());
      return lo;
    }
    return v;
  }

  Json scalar_json(const YAML::Node& n) {
    long long i = 0;
    double d = 0;
    bool b = false;
    const std::string& s = n.Scalar();
    if (YAML::convert<long long>::decode(n, i)) return i;
    if (YAML::convert<double>::decode(n, d)) return d;
    if ((s == "true" || s == "false") && YAML::convert<bool>::decode(n, b)) return b;
    return s;
  }

  BandSpec band(const YAML::Node& n, const std::string& field) {
    BandSpec b;
    if (!n.IsMap()) {
      issue(n, field, "expected a mapping with `from`");
      return b;
    }
    known_keys(n, field,
               {"from", "efficiency", "k", "tolerance", "min_group", "fraction", "min", "max", "field", "min_fraction",
                "max_fraction", "match", "alone"});
    if (!n["from"]) {
      issue(n, field + ".from", "missing; one of: peak, fleet, baseline, fixed, relative");
      return b;
    }
    b.from = text(n["from"], field + ".from", {"peak", "fleet", "baseline", "fixed", "relative"});
    if (const YAML::Node e = n["efficiency"]) {
      if (!e.IsMap()) issue(e, field + ".efficiency", "expected a mapping of GPU model -> efficiency (0..1]");
      for (auto it = e.begin(); e.IsMap() && it != e.end(); ++it) {
        const std::string model = it->first.Scalar();
        b.efficiency[model] = number(it->second, field + ".efficiency." + model, 1e-6, 1.0);
      }
    }
    if (n["k"]) b.k = number(n["k"], field + ".k", 0, 1000);
    if (n["tolerance"]) b.tolerance = number(n["tolerance"], field + ".tolerance", 0, 1);
    if (n["min_group"]) b.min_group = static_cast<int>(number(n["min_group"], field + ".min_group", 2, 1e6));
    if (n["fraction"]) b.fraction = number(n["fraction"], field + ".fraction", 1e-6, 10);
    if (n["min"]) b.min = number(n["min"], field + ".min", -1e300, 1e300);
    if (n["max"]) b.max = number(n["max"], field + ".max", -1e300, 1e300);
    if (n["field"]) b.field = text(n["field"], field + ".field");
    if (n["min_fraction"]) b.min_fraction = number(n["min_fraction"], field + ".min_fraction", 0, 1e6);
    if (n["max_fraction"]) b.max_fraction = number(n["max_fraction"], field + ".max_fraction", 0, 1e6);
    if (const YAML::Node m = n["match"]) {
      if (!m.IsSequence()) issue(m, field + ".match", "expected a list of point fields");
      for (std::size_t i = 0; m.IsSequence() && i < m.size(); ++i)
        b.match.push_back(text(m[i], field + ".match[" + std::to_string(i) + "]"));
    }
    if (const YAML::Node a = n["alone"]) {
      if (b.from != "fleet") issue(a, field + ".alone", "only a `from: fleet` band has an `alone` band");
      BandSpec inner = band(a, field + ".alone");
      if (inner.alone) issue(a["alone"], field + ".alone.alone", "an `alone` band has no `alone` of its own");
      b.alone = std::make_shared<const BandSpec>(std::move(inner));
    }
    // What each source needs.
    if (b.from == "peak" && b.efficiency.empty())
      issue(n, field + ".efficiency", "`from: peak` needs efficiency per GPU model (and `default` for others)");
    if (b.from == "fixed" && !b.min && !b.max) issue(n, field, "`from: fixed` needs min, max or both");
    if (b.from == "fixed" && b.min && b.max && *b.min > *b.max)
      issue(n["min"], field + ".min", "min is larger than max");
    if (b.from == "relative" && (b.field.empty() || (!b.min_fraction && !b.max_fraction)))
      issue(n, field, "`from: relative` needs `field` and min_fraction and/or max_fraction");
    return b;
  }

  Rule rule(const YAML::Node& n, const std::string& field) {
    Rule r;
    r.where = source_ + ":" + std::to_string(n.Mark().line + 1);
    if (!n.IsMap()) {
      issue(n, field, "expected a mapping (name, select, band or agree, ...)");
      return r;
    }
    known_keys(n, field, {"name", "select", "severity", "on_skipped", "band", "agree", "group_by", "disabled"});
    if (n["name"])
      r.name = text(n["name"], field + ".name");
    else
      issue(n, field + ".name", "missing");
    if (n["disabled"]) {
      bool off = false;
      if (!YAML::convert<bool>::decode(n["disabled"], off))
        issue(n["disabled"], field + ".disabled", "expected true or false");
      r.disabled = off;
      if (off) return r;
    }
    if (const YAML::Node s = n["select"]) {
      if (!s.IsMap()) {
        issue(s, field + ".select", "expected a mapping (workload, metric, point)");
      } else {
        known_keys(s, field + ".select", {"workload", "metric", "point"});
        if (s["workload"]) r.workload = text(s["workload"], field + ".select.workload");
        if (s["metric"]) r.metric = text(s["metric"], field + ".select.metric");
        if (const YAML::Node p = s["point"]) {
          if (!p.IsMap()) issue(p, field + ".select.point", "expected a mapping of point field -> value");
          for (auto it = p.begin(); p.IsMap() && it != p.end(); ++it) {
            if (!it->second.IsScalar())
              issue(it->second, field + ".select.point." + it->first.Scalar(), "expected a scalar value");
            else
              r.point[it->first.Scalar()] = scalar_json(it->second);
          }
        }
      }
    }
    if (r.workload.empty()) issue(n, field + ".select.workload", "missing: a rule selects one workload's records");
    if (n["severity"]) r.severity = text(n["severity"], field + ".severity", {"fail", "warn"});
    if (n["on_skipped"]) r.on_skipped = text(n["on_skipped"], field + ".on_skipped", {"skip", "warn", "fail"});
    if (n["band"]) r.band = band(n["band"], field + ".band");
    if (n["agree"]) r.agree = text(n["agree"], field + ".agree");
    if (!r.band && r.agree.empty()) issue(n, field, "needs `band` or `agree`");
    if (r.band && !r.agree.empty()) issue(n["agree"], field + ".agree", "a rule has `band` or `agree`, not both");
    if (const YAML::Node g = n["group_by"]) {
      r.group_by.clear();
      if (!g.IsSequence()) issue(g, field + ".group_by", "expected a list: model, host, gpu, point.<field>");
      for (std::size_t i = 0; g.IsSequence() && i < g.size(); ++i) {
        const std::string f = field + ".group_by[" + std::to_string(i) + "]";
        const std::string key = text(g[i], f);
        if (key != "model" && key != "host" && key != "gpu" && key.rfind("point.", 0) != 0)
          issue(g[i], f, "'" + key + "' is not model, host, gpu or point.<field>");
        r.group_by.push_back(key);
      }
    }
    return r;
  }

  RuleSet file(const YAML::Node& root) {
    RuleSet set;
    if (!root.IsMap() || !root["rules"]) {
      issue(root, "rules", "a rule file is a mapping with a `rules` list");
      return set;
    }
    known_keys(root, "", {"rules"});
    const YAML::Node list = root["rules"];
    if (!list.IsSequence()) {
      issue(list, "rules", "expected a list of rules");
      return set;
    }
    std::map<std::string, std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = "rules[" + std::to_string(i) + "]";
      Rule r = rule(list[i], field);
      if (!r.name.empty() && !names.emplace(r.name, r.where).second)
        issue(list[i]["name"], field + ".name", "rule '" + r.name + "' is already defined at " + names[r.name]);
      set.rules.push_back(std::move(r));
    }
    return set;
  }

  void finish() const {
    if (!issues_.empty()) throw SpecError(issues_);
  }

 private:
  std::string source_;
  std::vector<SourceIssue> issues_;
};

}  // namespace

RuleSet parse_rules(std::string_view yaml_text, std::string_view source_name) {
  check_yaml_bounds(yaml_text, source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw SpecError({{std::string(source_name), e.mark.line + 1, e.mark.column + 1, "", e.msg}});
  }
  RuleParser p{std::string(source_name)};
  RuleSet set = p.file(root);
  p.finish();
  return set;
}

RuleSet load_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read the rule file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_rules(ss.str(), path);
}

RuleSet override_rules(const RuleSet& base, const RuleSet& site) {
  RuleSet out = base;
  for (const Rule& r : site.rules) {
    auto same = std::find_if(out.rules.begin(), out.rules.end(), [&](const Rule& b) { return b.name == r.name; });
    if (same != out.rules.end())
      *same = r;
    else
      out.rules.push_back(r);
  }
  out.rules.erase(std::remove_if(out.rules.begin(), out.rules.end(), [](const Rule& r) { return r.disabled; }),
                  out.rules.end());
  return out;
}

}  // namespace scalebench::accept
