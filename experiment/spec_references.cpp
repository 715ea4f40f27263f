#include "experiment/spec_references.hpp"

#include <utility>

namespace scalebench {
namespace {

// A reference's `where:` block: the points it applies to.
void parse_reference_where(SpecParser& p, const WorkloadDef* wl, const YAML::Node& w, const std::string& f,
                           Reference& r) {
  if (!w.IsMap()) {
    p.issue(w, f + ".where", "expected a mapping of parameter: value");
    return;
  }
  for (auto e = w.begin(); e != w.end(); ++e) {
    std::string key = e->first.Scalar();
    const ParamDef* def = wl ? wl->find(key) : nullptr;
    if (key == "size") {
      ParamDef sdef{"size", ParamType::kSize, {}, {}, std::nullopt, ""};
      if (auto v = p.typed(sdef, e->second, f + ".where.size")) r.where[key] = *v;
    } else if (key == "variant" || key == "gpus" || key == "ranks") {
      if (auto v = p.scalar(e->second, f + ".where." + key)) r.where[key] = *v;
    } else if (def) {
      if (auto v = p.typed(*def, e->second, f + ".where." + key)) r.where[wl->current_name(key)] = *v;
    } else {
      p.issue_at(e->first.Mark(), f + ".where." + key,
                 "unknown; use a workload parameter, size, variant, gpus or ranks");
    }
  }
}

// One reference; nullopt when its body is not a mapping of the known keys (the issue is recorded).
std::optional<Reference> parse_reference(SpecParser& p, const WorkloadDef* wl, const std::string& metric,
                                         const YAML::Node& body) {
  Reference r;
  r.metric = metric;
  std::string f = "references." + r.metric;
  if (!p.check_keys(body, f, {"target", "lower", "upper", "unit", "better", "where"})) return std::nullopt;
  if (!body["target"])
    p.issue(body, f + ".target", "missing");
  else if (auto t = p.number(body["target"], f + ".target"))
    r.target = *t;
  if (body["lower"] && !body["lower"].IsNull()) {
    r.lower = p.number(body["lower"], f + ".lower");
    if (r.lower && *r.lower > 0)
      p.issue(body["lower"], f + ".lower", "a fraction at or under 0, e.g. -0.05 for 5% under");
  }
  if (body["upper"] && !body["upper"].IsNull()) {
    r.upper = p.number(body["upper"], f + ".upper");
    if (r.upper && *r.upper < 0) p.issue(body["upper"], f + ".upper", "a fraction at or over 0, e.g. 0.05 for 5% over");
  }
  if (body["unit"])
    if (auto u = p.scalar(body["unit"], f + ".unit")) r.unit = *u;
  if (body["better"]) {
    ParamDef def{"better", ParamType::kEnum, {}, {"higher", "lower"}, {}, ""};
    if (auto b = p.typed(def, body["better"], f + ".better")) r.better = *b;
  }
  if (const YAML::Node w = body["where"]) parse_reference_where(p, wl, w, f, r);
  return r;
}

}  // namespace

void parse_references(SpecParser& p, const WorkloadDef* wl, const YAML::Node& refs, Experiment& ex) {
  if (!refs.IsMap()) {
    p.issue(refs, "references", "expected a mapping of metric: {target, lower, upper, unit, better}");
    return;
  }
  for (auto it = refs.begin(); it != refs.end(); ++it)
    if (auto r = parse_reference(p, wl, it->first.Scalar(), it->second)) ex.references.push_back(std::move(*r));
}

}  // namespace scalebench
