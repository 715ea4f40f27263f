#include "catalog/workload_help.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace scalebench {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// "KIND", "KIND >= MIN", "KIND MIN..MAX".
std::string ranged(const std::string& kind, const ParamDef& p) {
  if (p.min && p.max) return kind + " " + number(*p.min) + ".." + number(*p.max);
  if (p.min) return kind + " >= " + number(*p.min);
  if (p.max) return kind + " <= " + number(*p.max);
  return kind;
}

std::string shown(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s + " ";
}

}  // namespace

std::string allowed_values(const ParamDef& p) {
  switch (p.type) {
    case ParamType::kInt:
      return ranged("integer", p);
    case ParamType::kSize:
      return ranged("size (bytes, or 4KiB, 1MiB, 1GiB ...)", p);
    case ParamType::kNumber:
      return ranged("number", p);
    case ParamType::kBool:
      return "true|false";
    case ParamType::kEnum: {
      std::string out;
      for (const auto& c : p.choices) out += (out.empty() ? "" : "|") + c;
      return out;
    }
    case ParamType::kIntOrAuto:
      return ranged("auto or integer", p);
    case ParamType::kText:
      return "text";
  }
  return "";
}

std::string workload_help(const WorkloadDef& def) {
  std::ostringstream out;
  out << def.name << ": " << def.help << "\n";
  if (def.outside_mpi) out << "It runs from a run spec (scalebench-run --spec RUN.json), as an experiment's runs do.\n";
  if (def.free_params) out << "Besides these, any parameter name is taken as text (its program's arguments use it).\n";
  out << "\nParameters (-p NAME=VALUE):\n";
  std::size_t name_w = 4, default_w = 7;
  for (const auto& p : def.params) {
    name_w = std::max(name_w, p.name.size());
    default_w = std::max(default_w, std::min<std::size_t>(shown(p.default_value).size(), 24));
  }
  out << "  " << padded("NAME", name_w) << padded("DEFAULT", default_w) << "ALLOWED, WHAT IT DOES\n";
  for (const auto& p : def.params)
    out << "  " << padded(p.name, name_w) << padded(shown(p.default_value), default_w) << allowed_values(p) << "; "
        << p.help << "\n";
  if (!def.measurement_params.empty()) {
    out << "How a point is measured (not part of what is compared):";
    for (const auto& m : def.measurement_params) out << " " << m;
    out << "\n";
  }
  if (!def.short_flags.empty()) {
    out << "Short flags (scalebench-run " << def.name << " FLAG V):\n";
    for (const auto& f : def.short_flags) out << "  " << f.flag << " V  " << f.help << ": -p " << f.param << "\n";
  }
  return out.str();
}

std::string workload_list(bool (*built)(const std::string& name)) {
  std::size_t width = 0;
  for (const auto& d : workload_defs()) width = std::max(width, d.name.size());
  std::ostringstream out;
  for (const auto& d : workload_defs()) {
    out << "  " << padded(d.name, width) << d.help;
    if (d.needs_gpus) out << " [GPU]";
    if (!built(d.name)) out << " (not built into this program)";
    out << "\n";
  }
  return out.str();
}

}  // namespace scalebench
