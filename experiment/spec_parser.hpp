#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "common/json.hpp"

// The experiment parser's reading tools, shared by the files that read one part of an experiment
// (spec.cpp, spec_command.cpp, spec_references.cpp).
namespace scalebench {

// Integers of the spec are held as int: a larger value is refused, never wrapped.
inline constexpr double kIntMax = 2147483647.0;

// Walks the YAML tree, collecting every problem with its position instead of stopping at the first.
class SpecParser {
 public:
  explicit SpecParser(std::string source) : source_(std::move(source)) {}

  void issue(const YAML::Node& at, const std::string& field, const std::string& message) {
    YAML::Mark m = at.Mark();
    issues_.push_back({source_, m.line + 1, m.column + 1, field, message});
  }
  void issue_at(const YAML::Mark& m, const std::string& field, const std::string& message) {
    issues_.push_back({source_, m.line + 1, m.column + 1, field, message});
  }
  bool ok() const { return issues_.empty(); }

  // yaml-cpp keeps the first of two equal keys without a word; a user who wrote the key twice
  // meant one of them, so say where.
  // Also bounds the nesting: an alias inside its own anchor makes a cycle that every later walk
  // over the document would follow for ever. Returns false when too deep (the issue is recorded).
  bool check_duplicate_keys(const YAML::Node& node, const std::string& field, int depth = 0) {
    constexpr int kMaxDepth = 32;
    if (depth > kMaxDepth) {
      issue(node, field,
            "nested more than " + std::to_string(kMaxDepth) + " levels deep (or an alias inside its own anchor)");
      return false;
    }
    if (node.IsMap()) {
      std::set<std::string> seen;
      for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
        const std::string path = field.empty() ? key : field + "." + key;
        if (!key.empty() && !seen.insert(key).second)
          issue_at(it->first.Mark(), path, "duplicate key; it was given earlier");
        if (!check_duplicate_keys(it->second, path, depth + 1)) return false;
      }
    } else if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i)
        if (!check_duplicate_keys(node[i], field + "[" + std::to_string(i) + "]", depth + 1)) return false;
    }
    return true;
  }
  std::vector<SourceIssue> take() { return std::move(issues_); }

  std::optional<std::string> scalar(const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) {
      issue(n, field, "expected a single value");
      return std::nullopt;
    }
    return n.Scalar();
  }

  // Keys of a map, each checked against the allowed set.
  bool check_keys(const YAML::Node& map, const std::string& field, const std::set<std::string>& allowed) {
    if (!map.IsMap()) {
      issue(map, field, "expected a mapping");
      return false;
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.Scalar();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        issue_at(it->first.Mark(), field.empty() ? key : field + "." + key, "unknown key; expected one of: " + list);
      }
    }
    return true;
  }

  std::optional<Json> typed(const ParamDef& def, const YAML::Node& n, const std::string& field) {
    auto text = scalar(n, field);
    if (!text) return std::nullopt;
    ParamValue v = parse_param(def, *text);
    if (!v.error.empty()) {
      issue(n, field, v.error);
      return std::nullopt;
    }
    return v.value;
  }

  // A value or a list of values, each typed by the parameter's definition.
  std::vector<Json> typed_list(const ParamDef& def, const YAML::Node& n, const std::string& field) {
    std::vector<Json> out;
    if (n.IsSequence()) {
      if (n.size() == 0) issue(n, field, "empty list");
      for (std::size_t i = 0; i < n.size(); ++i)
        if (auto v = typed(def, n[i], field + "[" + std::to_string(i) + "]")) out.push_back(*v);
    } else if (auto v = typed(def, n, field)) {
      out.push_back(*v);
    }
    return out;
  }

  std::vector<int> int_list(const YAML::Node& n, const std::string& field, int min) {
    ParamDef def{field, ParamType::kInt, {}, {}, static_cast<double>(min), "", kIntMax};
    std::vector<int> out;
    for (const auto& v : typed_list(def, n, field)) out.push_back(v.get<int>());
    return out;
  }

  std::optional<double> number(const YAML::Node& n, const std::string& field) {
    ParamDef def{field, ParamType::kNumber, {}, {}, std::nullopt, ""};
    if (auto v = typed(def, n, field)) return v->get<double>();
    return std::nullopt;
  }

 private:
  std::string source_;
  std::vector<SourceIssue> issues_;
};

}  // namespace scalebench
