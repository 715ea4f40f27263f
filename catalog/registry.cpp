#include "catalog/registry.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>

namespace scalebench {

std::string WorkloadDef::current_name(std::string_view param) const {
  for (const auto& [former, now] : former_names)
    if (former == param) return now;
  return std::string(param);
}

const ParamDef* WorkloadDef::find(std::string_view param) const {
  const std::string name = current_name(param);
  for (const auto& p : params)
    if (p.name == name) return &p;
  static const ParamDef text{"", ParamType::kText, {}, {}, {}, "a value substituted into the program's arguments"};
  return free_params ? &text : nullptr;
}

const ShortFlag* WorkloadDef::find_short_flag(std::string_view flag) const {
  for (const auto& f : short_flags)
    if (f.flag == flag) return &f;
  return nullptr;
}

const WorkloadDef* find_workload(std::string_view name) {
  for (const auto& d : workload_defs())
    if (d.name == name) return &d;
  return nullptr;
}

std::string workload_names() {
  std::string list;
  for (const auto& d : workload_defs()) list += (list.empty() ? "" : ", ") + d.name;
  return list;
}

Json with_defaults(const WorkloadDef& def, const Json& params) {
  Json out = Json::object();
  for (const auto& p : def.params) out[p.name] = p.default_value;
  if (params.is_object())
    for (const auto& [k, v] : params.items()) out[def.current_name(k)] = v;
  return out;
}

Json with_defaults(std::string_view workload, const Json& params) {
  const WorkloadDef* def = find_workload(workload);
  if (!def)
    throw std::invalid_argument("workload: unknown workload '" + std::string(workload) +
                                "'; expected one of: " + workload_names());
  return with_defaults(*def, params);
}

int processes_per_node(std::string_view workload, const Json& params, int gpus, std::string* why) {
  const WorkloadDef* def = find_workload(workload);
  if (!def || !def->processes_per_node) return gpus;
  return def->processes_per_node(with_defaults(*def, params), gpus, why);
}

std::string check_param_set(const WorkloadDef& def, const Json& params) {
  return def.check ? def.check(with_defaults(def, params)) : std::string();
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

const std::vector<std::string>& all_measurement_params() {
  static const std::vector<std::string> all = [] {
    std::set<std::string> s;
    for (const auto& d : workload_defs()) {
      s.insert(d.measurement_params.begin(), d.measurement_params.end());
      // Records written before a rename carry the former name.
      for (const auto& [former, now] : d.former_names)
        if (std::find(d.measurement_params.begin(), d.measurement_params.end(), now) != d.measurement_params.end())
          s.insert(former);
    }
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return all;
}

}  // namespace scalebench
