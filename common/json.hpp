#pragma once
// nlohmann/json (Debian's nlohmann-json3-dev): header-only, exact round-trips of numbers, and
// ordered objects so that records read in the order they were written. docs/design.md says why.
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace scalebench {
using Json = nlohmann::ordered_json;

// `j` with every object's keys sorted: the same parameters written in another order (a variant's
// overrides come last) compare equal as text.
inline Json sorted_keys(const Json& j) {
  if (!j.is_object()) return j;
  std::map<std::string, Json> m;
  for (auto it = j.begin(); it != j.end(); ++it) m[it.key()] = sorted_keys(it.value());
  Json out = Json::object();
  for (auto& [k, v] : m) out[k] = std::move(v);
  return out;
}
}  // namespace scalebench
