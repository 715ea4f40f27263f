#include "coordinator/route.hpp"

namespace scalebench {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c, bool colon) {
  return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' || c == '-' ||
         (colon && c == ':');
}
// `path` with `prefix` taken off its front, or false.
bool strip(std::string_view& path, std::string_view prefix) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  path.remove_prefix(prefix.size());
  return true;
}
// The segment up to the next '/' (or the end), and what follows it (from the '/').
std::string_view segment(std::string_view path, std::string_view& rest) {
  const auto slash = path.find('/');
  rest = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  return path.substr(0, slash);
}
// 1-18 digits: an id that fits a long long.
bool is_id(std::string_view id) {
  if (id.empty() || id.size() > 18) return false;
  for (char c : id)
    if (!is_digit(c)) return false;
  return true;
}
}  // namespace

Route match_route(std::string_view path) {
  using Kind = Route::Kind;
  std::string_view rest;
  if (strip(path, "/api/v1/runs/")) {
    const std::string_view id = segment(path, rest);
    if (!is_id(id)) return {};
    if (rest == "/records") return {Kind::kRunRecords, id};
    if (rest == "/finish") return {Kind::kRunFinish, id};
    return {};
  }
  if (strip(path, "/api/v1/predictions/")) {
    const std::string_view id = segment(path, rest);
    if (!is_id(id) || !rest.empty()) return {};
    return {Kind::kPrediction, id};
  }
  if (strip(path, "/api/v1/agents/")) {
    const std::string_view name = segment(path, rest);
    if (name.empty() || name.size() > 128 || rest != "/heartbeat") return {};
    for (char c : name)
      if (!is_name_char(c, true)) return {};
    return {Kind::kAgentHeartbeat, name};
  }
  if (strip(path, "/api/v1/experiments/")) {
    const std::string_view name = segment(path, rest);
    if (name.empty() || name.size() > 100) return {};
    for (char c : name)
      if (!is_name_char(c, false)) return {};
    if (rest.empty()) return {Kind::kExperiment, name};
    if (rest == "/cancel") return {Kind::kExperimentCancel, name};
  }
  return {};
}

}  // namespace scalebench
