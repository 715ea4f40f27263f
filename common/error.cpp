#include "common/error.hpp"

namespace scalebench {

std::string SourceIssue::to_string() const {
  std::string s = file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  if (!field.empty()) s += "field '" + field + "': ";
  return s + message;
}

static std::string join_issues(const std::vector<SourceIssue>& issues) {
  std::string s;
  for (const auto& i : issues) {
    if (!s.empty()) s += "\n";
    s += i.to_string();
  }
  return s;
}

SpecError::SpecError(std::vector<SourceIssue> issues) : Error(join_issues(issues)), issues_(std::move(issues)) {}

}  // namespace scalebench
