#include "accept/record_view.hpp"

#include <set>

namespace scalebench::accept {

std::string host_of(const Json& r) {
  if (r.contains("point") && r["point"].contains("host") && r["point"]["host"].is_string())
    return r["point"]["host"].get<std::string>();
  const Json hosts = field_at(r, "placement.hosts");
  if (!hosts.is_array() || hosts.empty()) return "";
  std::set<std::string> distinct;
  for (const Json& h : hosts)
    if (h.is_string()) distinct.insert(h.get<std::string>());
  return distinct.size() == 1 ? *distinct.begin() : "";
}

int gpu_of(const Json& r) {
  const Json g = field_at(r, "point.gpu");
  return g.is_number_integer() ? g.get<int>() : -1;
}

std::string model_of(const Json& r) {
  const Json m = field_at(r, "point.model");
  if (m.is_string()) return m.get<std::string>();
  const Json models = field_at(r, "environment.gpu_models");
  if (models.is_array() && models.size() == 1 && models[0].is_string()) return models[0].get<std::string>();
  return "";
}

Json field_at(const Json& record, const std::string& path) {
  const Json* at = &record;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('.', start);
    if (end == std::string::npos) end = path.size();
    const std::string key = path.substr(start, end - start);
    if (!at->is_object() || !at->contains(key)) return Json();
    at = &(*at)[key];
    start = end + 1;
  }
  return *at;
}

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
  if (r.value("workload", "") != rule.workload) return false;
  if (!rule.metric.empty() && r.value("metric", "") != rule.metric) {
    // A skipped or failed run record (metric "run") of the workload still answers to the rule.
    if (r.value("metric", "") != "run" || r.value("status", "") == "ok") return false;
  }
  for (const auto& [key, want] : rule.point.items()) {
    const Json have = field_at(r, "point." + key);
    if (have.is_null() || !same_value(want, have)) return false;
  }
  return true;
}

std::string group_key(const Rule& rule, const Json& r) {
  std::string key;
  for (const std::string& g : rule.group_by) {
    std::string part;
    if (g == "model")
      part = model_of(r);
    else if (g == "host")
      part = host_of(r);
    else if (g == "gpu")
      part = std::to_string(gpu_of(r));
    else {
      const Json v = field_at(r, g);
      part = v.is_string() ? v.get<std::string>() : v.dump();
    }
    key += (key.empty() ? "" : "|") + part;
  }
  return key;
}

}  // namespace scalebench::accept
