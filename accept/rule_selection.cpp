#include "accept/rule_selection.hpp"

#include "record/record_reader.hpp"

namespace scalebench::accept {

namespace {
// A rule's value as written (YAML scalars are typed loosely) against the record's.
bool same_value(const Json& want, const Json& have) {
  if (want == have) return true;
  if (want.is_number() && have.is_number()) return want.get<double>() == have.get<double>();
  const std::string w = want.is_string() ? want.get<std::string>() : want.dump();
  const std::string h = have.is_string() ? have.get<std::string>() : have.dump();
  return w == h;
}
}  // namespace

bool selects(const Rule& rule, const Json& r) {
  const RecordView v(r);
  if (v.workload != rule.workload) return false;
  if (!rule.metric.empty() && v.metric != rule.metric) {
    // A skipped or failed run record (metric "run") of the workload still answers to the rule.
    if (v.is_figure() || v.ok()) return false;
  }
  for (const auto& [key, want] : rule.point.items()) {
    const Json have = field_at(r, "point." + key);
    if (have.is_null() || !same_value(want, have)) return false;
  }
  return true;
}

std::string group_key(const Rule& rule, const Json& r) {
  const RecordView v(r);
  std::string key;
  for (const std::string& g : rule.group_by) {
    std::string part;
    if (g == "model")
      part = v.model();
    else if (g == "host")
      part = v.host();
    else if (g == "gpu")
      part = std::to_string(v.gpu());
    else {
      const Json v = field_at(r, g);
      part = v.is_string() ? v.get<std::string>() : v.dump();
    }
    key += (key.empty() ? "" : "|") + part;
  }
  return key;
}

}  // namespace scalebench::accept
