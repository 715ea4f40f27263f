#include "common/spec.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/units.hpp"
#include "common/workload_schema.hpp"

namespace scalebench {
namespace {

// Integers of the spec are held as int: a larger value is refused, never wrapped.
constexpr double kIntMax = 2147483647.0;

// Walks the YAML tree, collecting every problem with its position instead of stopping at the first.
class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

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

const std::set<std::string> kTopKeys = {"name",   "description", "workload",   "command",  "params",
                                        "matrix", "zip",         "placement",  "variants", "repetitions",
                                        "rounds", "timeout",     "references", "priority", "retries"};

void parse_params(Parser& p, const WorkloadDef& wl, const YAML::Node& node, const std::string& field, Json& out) {
  if (!node.IsMap()) {
    p.issue(node, field, "expected a mapping of parameter: value");
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string key = it->first.Scalar();
    const ParamDef* def = wl.find(key);
    if (!def) {
      std::string list;
      for (const auto& d : wl.params) list += (list.empty() ? "" : ", ") + d.name;
      p.issue_at(it->first.Mark(), field + "." + key,
                 "unknown parameter of workload '" + wl.name + "'; expected one of: " + list);
      continue;
    }
    if (auto v = p.typed(*def, it->second, field + "." + key)) out[key] = *v;
  }
}

std::vector<SweepAxis> parse_axes(Parser& p, const WorkloadDef& wl, const YAML::Node& node, const std::string& field) {
  std::vector<SweepAxis> axes;
  if (!node.IsMap()) {
    p.issue(node, field, "expected a mapping of parameter: [values]");
    return axes;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string key = it->first.Scalar();
    const ParamDef* def = wl.find(key);
    if (!def) {
      p.issue_at(it->first.Mark(), field + "." + key, "unknown parameter of workload '" + wl.name + "'");
      continue;
    }
    if (!it->second.IsSequence()) {
      p.issue(it->second, field + "." + key, "expected a list of values to sweep");
      continue;
    }
    axes.push_back({key, p.typed_list(*def, it->second, field + "." + key)});
  }
  return axes;
}

// The `command:` block of an experiment or a variant.
std::optional<CommandSpec> parse_command(Parser& p, const YAML::Node& node, const std::string& field) {
  if (!p.check_keys(node, field, {"program", "args", "launch", "parser", "output_file", "figures"}))
    return std::nullopt;
  CommandSpec c;
  bool ok = true;
  if (!node["program"]) {
    p.issue(node, field + ".program", "missing; the program to run, e.g. all_reduce_perf or python3");
    ok = false;
  } else if (auto s = p.scalar(node["program"], field + ".program")) {
    c.program = *s;
  }
  if (const YAML::Node args = node["args"]) {
    if (!args.IsSequence())
      p.issue(args, field + ".args", "expected a list of arguments, e.g. [-b, \"{min_bytes}\", -e, 1G]");
    else
      for (std::size_t i = 0; i < args.size(); ++i)
        if (auto s = p.scalar(args[i], field + ".args[" + std::to_string(i) + "]")) c.args.push_back(*s);
  }
  auto choice = [&](const char* key, const std::vector<std::string>& choices, std::string& out) {
    if (!node[key]) return;
    ParamDef def{key, ParamType::kEnum, {}, choices, {}, ""};
    if (auto v = p.typed(def, node[key], field + "." + key)) out = *v;
  };
  choice("launch", command_launches(), c.launch);
  choice("parser", command_parsers(), c.parser);
  if (node["output_file"])
    if (auto s = p.scalar(node["output_file"], field + ".output_file")) c.output_file = *s;
  if (c.parser == "nccl-tests-json" && c.output_file.empty())
    p.issue(node, field + ".output_file",
            "parser nccl-tests-json reads the file nccl-tests writes with -J; name it here, e.g. "
            "\"{output_dir}/nccl-tests.json\", and pass it with -J in args");
  if (const YAML::Node figs = node["figures"]) {
    if (!figs.IsMap()) {
      p.issue(figs, field + ".figures", "expected a mapping of name: {regex, value_group, context, unit, better}");
    } else {
      for (auto it = figs.begin(); it != figs.end(); ++it) {
        Figure f;
        f.name = it->first.Scalar();
        const std::string ff = field + ".figures." + f.name;
        const YAML::Node body = it->second;
        if (!p.check_keys(body, ff, {"regex", "value_group", "context", "unit", "better"})) continue;
        unsigned groups = 0;
        if (!body["regex"]) {
          p.issue(body, ff + ".regex", "missing; a regular expression whose first group captures the number");
        } else if (auto r = p.scalar(body["regex"], ff + ".regex")) {
          f.regex = *r;
          try {
            groups = static_cast<unsigned>(std::regex(f.regex).mark_count());
          } catch (const std::regex_error& e) {
            p.issue(body["regex"], ff + ".regex", std::string("not a valid regular expression: ") + e.what());
            continue;
          }
        }
        auto group = [&](const YAML::Node& n, const std::string& gf) -> std::optional<int> {
          ParamDef def{gf, ParamType::kInt, {}, {}, 1.0, "", kIntMax};
          auto v = p.typed(def, n, gf);
          if (!v) return std::nullopt;
          if (v->get<unsigned>() > groups) {
            p.issue(n, gf, "the regex has " + std::to_string(groups) + " capture group(s), not " + v->dump());
            return std::nullopt;
          }
          return v->get<int>();
        };
        if (body["value_group"]) {
          if (auto g = group(body["value_group"], ff + ".value_group")) f.value_group = *g;
        } else if (groups < 1 && !f.regex.empty()) {
          p.issue(body["regex"], ff + ".regex", "needs a capture group around the number, e.g. 'busbw: ([0-9.]+)'");
        }
        if (const YAML::Node ctx = body["context"]) {
          if (!ctx.IsMap())
            p.issue(ctx, ff + ".context", "expected a mapping of point field: capture group, e.g. {size: 1}");
          else
            for (auto e = ctx.begin(); e != ctx.end(); ++e)
              if (auto g = group(e->second, ff + ".context." + e->first.Scalar())) f.context[e->first.Scalar()] = *g;
        }
        if (body["unit"])
          if (auto u = p.scalar(body["unit"], ff + ".unit")) f.unit = *u;
        if (body["better"]) {
          ParamDef def{"better", ParamType::kEnum, {}, {"higher", "lower"}, {}, ""};
          if (auto b = p.typed(def, body["better"], ff + ".better")) f.better = *b;
        }
        c.figures.push_back(std::move(f));
      }
    }
  }
  if (c.parser.empty() && c.figures.empty())
    p.issue(node, field,
            "give a parser (" + std::string("nccl-tests, nccl-tests-json, images-per-second") +
                ") or figures to read from the program's output");
  if (!ok) return std::nullopt;
  return c;
}

// The node at from[k0][k1]... while each step is a mapping holding the key, else the last one
// reached: where an issue about a parsed value points, however the YAML gave that value (an
// alias, a merge), without yaml-cpp's throwing lookups on scalars.
YAML::Node node_at(const YAML::Node& from, std::initializer_list<std::string> keys) {
  YAML::Node n(from);
  for (const std::string& k : keys) {
    if (!n.IsMap()) break;
    const YAML::Node c = static_cast<const YAML::Node&>(n)[k];  // the const lookup adds no key
    if (!c.IsDefined() || c.IsNull()) break;
    n.reset(c);  // rebinds; operator= would write into the document
  }
  return n;
}

// Every {placeholder} of a command names a parameter of the run or a built-in one.
void check_placeholders(Parser& p, const YAML::Node& node, const std::string& field, const CommandSpec& c,
                        const std::set<std::string>& params) {
  const auto& builtin = command_builtin_vars();
  std::string builtin_list;
  for (const auto& b : builtin) builtin_list += (builtin_list.empty() ? "" : ", ") + b;
  auto check = [&](const std::string& text, const YAML::Node& at, const std::string& f) {
    try {
      for (const auto& name : placeholders(text)) {
        if (!params.count(name) && std::find(builtin.begin(), builtin.end(), name) == builtin.end())
          p.issue(at, f, "{" + name + "} is neither a parameter of this experiment nor one of " + builtin_list);
      }
    } catch (const Error& e) {
      p.issue(at, f, e.what());
    }
  };
  // Where an issue points: the field's own node where the YAML has one that lines up with the
  // parsed command, else the command's node (the parse may have filled the field otherwise).
  auto child = [&](const char* key) {
    const YAML::Node n = node.IsMap() ? node[key] : YAML::Node();
    return n.IsDefined() && !n.IsNull() ? n : node;
  };
  check(c.program, child("program"), field + ".program");
  const YAML::Node args = child("args");
  for (std::size_t i = 0; i < c.args.size(); ++i)
    check(c.args[i], args.IsSequence() && i < args.size() ? args[i] : node, field + ".args[" + std::to_string(i) + "]");
  check(c.output_file, child("output_file"), field + ".output_file");
}

}  // namespace

std::map<std::string, std::string> transport_env(const std::string& transport) {
  if (transport == "pcie") return {{"NCCL_P2P_DISABLE", "1"}};
  if (transport == "net") return {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}};
  if (transport == "p2p-pcie") return {{"NCCL_P2P_LEVEL", "PXB"}};
  return {};
}

namespace {
// Where the first byte that is not part of well-formed UTF-8 lies (no overlong forms, surrogates
// or code points past U+10FFFF); npos when the whole text is UTF-8. Experiments are stored and
// served as JSON strings, which hold UTF-8 only.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + static_cast<std::size_t>(len) > s.size()) return i;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((b & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += static_cast<std::size_t>(len);
  }
  return std::string_view::npos;
}

// Checks a YAML text's shape from the parser's events before any node tree is walked: one
// document, bounded nesting, a bounded number of nodes as written and, above all, as aliases
// expand them. yaml-cpp shares an aliased node instead of copying it, so loading is linear, but
// every walk over the tree (ours, and nlohmann's when it is converted) visits an alias's nodes
// once per reference: ten levels of ten aliases each ("billion laughs") are 10^10 visits from a
// few hundred bytes. The expanded size of each anchor is counted here once, in one pass.
class YamlBounds : public YAML::EventHandler {
 public:
  YamlBounds(std::string source, const YamlLimits& limits) : source_(std::move(source)), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const std::uint64_t size = anchor < sizes_.size() ? sizes_[anchor] : 1;
    if (size == kOpen) fail(mark, "an alias inside its own anchor (a cycle)");
    add(mark, size);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  static constexpr std::uint64_t kOpen = ~std::uint64_t{0};
  struct Frame {
    YAML::anchor_t anchor;
    std::uint64_t size;
  };
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& message) {
    throw SpecError({{source_, m.line + 1, m.column + 1, "", message}});
  }
  void set_anchor(YAML::anchor_t anchor, std::uint64_t size) {
    if (anchor == 0) return;
    if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 1);
    sizes_[anchor] = size;
  }
  // A node of `size` expanded nodes appears here (1 for a node as written, an anchor's size for
  // an alias).
  void add(const YAML::Mark& mark, std::uint64_t size) {
    expanded_ += size;
    if (expanded_ > limits_.max_expanded_nodes)
      fail(mark, "aliases expand the document into more than " + std::to_string(limits_.max_expanded_nodes) +
                     " nodes (nested aliases, a \"billion laughs\"?); an experiment needs far fewer");
    if (!stack_.empty()) stack_.back().size += size;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark);
    set_anchor(anchor, 1);
    add(mark, 1);
  }
  void count(const YAML::Mark& mark) {
    if (++written_ > limits_.max_nodes)
      fail(mark, "more than " + std::to_string(limits_.max_nodes) + " YAML nodes; an experiment needs far fewer");
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark);
    if (static_cast<int>(stack_.size()) >= limits_.max_depth)
      fail(mark, "nested more than " + std::to_string(limits_.max_depth) + " levels deep");
    set_anchor(anchor, kOpen);
    expanded_ += 1;
    stack_.push_back({anchor, 1});
    marks_.push_back(mark);
  }
  void close() {
    const Frame f = stack_.back();
    const YAML::Mark mark = marks_.back();
    stack_.pop_back();
    marks_.pop_back();
    set_anchor(f.anchor, f.size);
    if (!stack_.empty()) {
      stack_.back().size += f.size;
      if (expanded_ > limits_.max_expanded_nodes) fail(mark, "too many nodes");
    }
  }

  std::string source_;
  YamlLimits limits_;
  std::vector<std::uint64_t> sizes_;  // expanded size by anchor id (kOpen while it is being read)
  std::vector<Frame> stack_;
  std::vector<YAML::Mark> marks_;
  std::uint64_t expanded_ = 0;
  std::size_t written_ = 0;
};
}  // namespace

void check_yaml_bounds(std::string_view yaml_text, std::string_view source_name, const YamlLimits& limits) {
  const std::string source(source_name);
  if (yaml_text.size() > limits.max_bytes)
    throw SpecError({{source, 1, 1, "",
                      "over " + std::to_string(limits.max_bytes) +
                          " bytes, the most an experiment file may have (the largest example has a few KiB)"}});
  std::istringstream in{std::string(yaml_text)};
  try {
    YAML::Parser parser(in);
    YamlBounds bounds(source, limits);
    if (!parser.HandleNextDocument(bounds))
      throw SpecError({{source, 1, 1, "",
                        "the file is empty; an experiment is a YAML mapping with at least 'name' and 'workload'"}});
    // A second document would be ignored by the load; say so instead (a study file's documents
    // are split before they get here: split_yaml_documents).
    struct StopScan {};
    struct Start : YAML::EventHandler {
      YAML::Mark at;
      bool seen = false;
      void OnDocumentStart(const YAML::Mark& m) override {
        if (!seen) at = m;
        seen = true;
      }
      void OnDocumentEnd() override {}
      void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
      void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
      void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { note(m); }
      void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                           YAML::EmitterStyle::value) override {
        note(m);
        throw StopScan{};
      }
      void OnSequenceEnd() override {}
      void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        note(m);
        throw StopScan{};
      }
      void OnMapEnd() override {}
      void note(const YAML::Mark& m) {
        if (!seen) at = m;
      }
    } next;
    bool more = false;
    try {
      more = parser.HandleNextDocument(next);
    } catch (const StopScan&) {
      more = true;  // stopped at the second document's first collection
    }
    if (more || next.seen) {
      const int line = next.at.line >= 0 ? next.at.line + 1 : 1, column = next.at.column >= 0 ? next.at.column + 1 : 1;
      throw SpecError({{source, line, column, "",
                        "a second YAML document; an experiment file holds one (a study runs several: scalebench "
                        "study)"}});
    }
  } catch (const YAML::ParserException& e) {
    throw SpecError({{source, e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg}});
  }
}

namespace {
// The YAML node's position, 1-based; 1:1 for a node that has none (an empty document).
std::pair<int, int> position_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return {m.line >= 0 ? m.line + 1 : 1, m.column >= 0 ? m.column + 1 : 1};
}
}  // namespace

Experiment parse_experiment(std::string_view yaml_text, std::string_view source_name) {
  if (const std::size_t bad = first_invalid_utf8(yaml_text); bad != std::string_view::npos) {
    const std::string_view before = yaml_text.substr(0, bad);
    const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t line_start = before.rfind('\n');
    const int column = static_cast<int>(bad - (line_start == std::string_view::npos ? 0 : line_start + 1)) + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(yaml_text[bad]));
    throw SpecError({{std::string(source_name), line, column, "",
                      std::string("not UTF-8 text (byte ") + byte + "); experiment files are UTF-8"}});
  }
  check_yaml_bounds(yaml_text, source_name);
  Parser p{std::string(source_name)};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw SpecError({{std::string(source_name), e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg}});
  }
  if (!root.IsMap()) {
    const auto [line, column] = position_of(root);
    throw SpecError({{std::string(source_name), line, column, "",
                      "an experiment file is a YAML mapping with at least 'name' and 'workload'"}});
  }
  Experiment ex;
  ex.source = std::string(source_name);
  p.check_keys(root, "", kTopKeys);
  if (!p.check_duplicate_keys(root, "")) throw SpecError(p.take());

  if (!root["name"])
    p.issue(root, "name", "missing; every experiment needs a name");
  else if (auto s = p.scalar(root["name"], "name")) {
    static const std::regex ok("[A-Za-z0-9][A-Za-z0-9_.-]{0,99}");
    if (!std::regex_match(*s, ok))
      p.issue(root["name"], "name", "use 1-100 letters, digits, '_', '.', '-' (it becomes a metric label)");
    ex.name = *s;
  }
  if (root["description"])
    if (auto s = p.scalar(root["description"], "description")) ex.description = *s;

  const WorkloadDef* wl = nullptr;
  if (!root["workload"])
    p.issue(root, "workload", "missing; e.g. 'workload: collective'");
  else if (auto s = p.scalar(root["workload"], "workload")) {
    wl = find_workload(*s);
    if (!wl) {
      std::string list;
      for (const auto& d : workload_defs()) list += (list.empty() ? "" : ", ") + d.name;
      p.issue(root["workload"], "workload", "unknown workload '" + *s + "'; expected one of: " + list);
    }
    ex.workload = *s;
  }

  if (wl) {
    for (const auto& d : wl->params) ex.params[d.name] = d.default_value;
    if (root["params"]) parse_params(p, *wl, root["params"], "params", ex.params);
    if (root["matrix"]) ex.matrix = parse_axes(p, *wl, root["matrix"], "matrix");
    if (root["zip"]) {
      ex.zip = parse_axes(p, *wl, root["zip"], "zip");
      for (const auto& a : ex.zip)
        if (a.values.size() != ex.zip.front().values.size())
          p.issue(root["zip"][a.param], "zip." + a.param,
                  "zip lists move in lock-step and must have the same length (" +
                      std::to_string(ex.zip.front().values.size()) + " for '" + ex.zip.front().param + "', " +
                      std::to_string(a.values.size()) + " here)");
      for (const auto& a : ex.zip)
        for (const auto& m : ex.matrix)
          if (a.param == m.param)
            p.issue(root["zip"][a.param], "zip." + a.param, "parameter is also swept in 'matrix'");
    }
    std::string cross = check_param_set(*wl, ex.params);
    if (!cross.empty()) p.issue(root["params"] ? root["params"] : root, "params", cross);
  }
  if (root["command"]) {
    if (ex.workload == "command")
      ex.command = parse_command(p, root["command"], "command");
    else if (wl)
      p.issue(root["command"], "command",
              "a command block belongs to 'workload: command' (or to a variant with 'workload: command')");
  } else if (ex.workload == "command") {
    p.issue(root, "command", "missing; workload command needs the program to run and how to read its figures");
  }

  if (const YAML::Node pl = root["placement"]) {
    if (p.check_keys(pl, "placement", {"nodes", "gpus_per_node", "ranks_per_node", "oversize", "agents"})) {
      if (pl["nodes"]) {
        ex.placement.nodes = p.int_list(pl["nodes"], "placement.nodes", 1);
        for (int n : ex.placement.nodes)
          if (n > kMaxNodes)
            p.issue(pl["nodes"], "placement.nodes",
                    std::to_string(n) + " nodes is over the limit of " + std::to_string(kMaxNodes) + " per run");
      }
      if (pl["gpus_per_node"]) {
        ParamDef def{"gpus_per_node", ParamType::kInt, {}, {}, 1.0, "", kIntMax};
        ex.placement.gpus_per_node.clear();
        const YAML::Node g = pl["gpus_per_node"];
        auto one = [&](const YAML::Node& n, const std::string& f) {
          if (n.IsScalar() && n.Scalar() == "all")
            ex.placement.gpus_per_node.push_back("all");
          else if (auto v = p.typed(def, n, f))
            ex.placement.gpus_per_node.push_back(*v);
        };
        if (g.IsSequence() && g.size() == 0) p.issue(g, "placement.gpus_per_node", "empty list");
        if (g.IsSequence())
          for (std::size_t i = 0; i < g.size(); ++i) one(g[i], "placement.gpus_per_node[" + std::to_string(i) + "]");
        else
          one(g, "placement.gpus_per_node");
      }
      if (pl["ranks_per_node"])
        ex.placement.ranks_per_node = p.int_list(pl["ranks_per_node"], "placement.ranks_per_node", 1);
      if (const YAML::Node a = pl["agents"]) {
        if (!a.IsSequence() || a.size() == 0)
          p.issue(a, "placement.agents", "expected a non-empty list of agent names");
        for (std::size_t i = 0; a.IsSequence() && i < a.size(); ++i) {
          if (!a[i].IsScalar() || a[i].Scalar().empty())
            p.issue(a[i], "placement.agents[" + std::to_string(i) + "]", "expected an agent name");
          else
            ex.placement.agents.push_back(a[i].Scalar());
        }
      }
      if (pl["oversize"]) {
        ParamDef def{"oversize", ParamType::kEnum, {}, {"fail", "skip"}, {}, ""};
        if (auto v = p.typed(def, pl["oversize"], "placement.oversize")) ex.placement.oversize = *v;
      }
    }
  }

  if (const YAML::Node vs = root["variants"]) {
    if (!vs.IsMap())
      p.issue(vs, "variants", "expected a mapping of name: {env: {...}, params: {...}}");
    else
      for (auto it = vs.begin(); it != vs.end(); ++it) {
        Variant v;
        v.name = it->first.Scalar();
        std::string f = "variants." + v.name;
        const YAML::Node body = it->second;
        if (body.IsNull()) {
          ex.variants.push_back(v);
          continue;
        }
        if (!p.check_keys(body, f, {"env", "params", "when", "transport", "workload", "command"})) continue;
        if (body["workload"]) {
          if (auto w = p.scalar(body["workload"], f + ".workload")) {
            if (*w != "command" && *w != ex.workload)
              p.issue(
                  body["workload"], f + ".workload",
                  "a variant may run 'command' (a program of its own) or the experiment's workload, not '" + *w + "'");
            else if (*w == "command")
              v.workload = *w;
          }
        }
        if (body["command"]) {
          if (v.workload == "command" || (ex.workload == "command" && !body["workload"]))
            v.command = parse_command(p, body["command"], f + ".command");
          else
            p.issue(body["command"], f + ".command", "a variant's command block needs 'workload: command' beside it");
        } else if (v.workload == "command" && ex.workload != "command") {
          p.issue(body, f + ".command", "missing; 'workload: command' needs the program to run");
        }
        if (body["transport"]) {
          ParamDef def{"transport", ParamType::kEnum, {}, {"nvlink", "pcie", "p2p-pcie", "net"}, {}, ""};
          if (auto t = p.typed(def, body["transport"], f + ".transport")) {
            v.transport = *t;
            v.when = "gpu";  // a transport is a GPU matter; `when` below may still narrow it
            v.env = transport_env(v.transport);
          }
        }
        if (const YAML::Node env = body["env"]) {
          if (!env.IsMap())
            p.issue(env, f + ".env", "expected a mapping of VARIABLE: value");
          else
            for (auto e = env.begin(); e != env.end(); ++e) {
              std::string key = e->first.Scalar();
              static const std::regex var("[A-Za-z_][A-Za-z0-9_]*");
              if (!std::regex_match(key, var))
                p.issue_at(e->first.Mark(), f + ".env." + key, "not a valid environment variable name");
              if (auto val = p.scalar(e->second, f + ".env." + key)) v.env[key] = *val;  // over the transport's
            }
        }
        if (body["params"] && wl) parse_params(p, *wl, body["params"], f + ".params", v.params);
        if (body["when"]) {
          ParamDef def{"when", ParamType::kEnum, {}, {"any", "gpu", "host"}, {}, ""};
          if (auto w = p.typed(def, body["when"], f + ".when")) v.when = *w;
        }
        ex.variants.push_back(std::move(v));
      }
  }

  if (root["repetitions"]) {
    ParamDef def{"repetitions", ParamType::kInt, {}, {}, 1.0, "", 1e6};
    if (auto v = p.typed(def, root["repetitions"], "repetitions")) ex.repetitions = v->get<int>();
  }
  if (root["rounds"]) {
    ParamDef def{"rounds", ParamType::kInt, {}, {}, 1.0, "", kIntMax};
    if (auto v = p.typed(def, root["rounds"], "rounds")) ex.rounds = v->get<int>();
  }
  if (root["priority"]) {
    ParamDef def{"priority", ParamType::kInt, {}, {}, -1000.0, "", 1000.0};
    if (auto v = p.typed(def, root["priority"], "priority")) ex.priority = v->get<int>();
  }
  if (root["retries"]) {
    ParamDef def{"retries", ParamType::kInt, {}, {}, 0.0, "", 5.0};
    if (auto v = p.typed(def, root["retries"], "retries")) ex.retries = v->get<int>();
  }
  if (root["timeout"]) {
    if (auto s = p.scalar(root["timeout"], "timeout")) {
      auto d = parse_duration_s(*s);
      if (!d || *d <= 0)
        p.issue(root["timeout"], "timeout", "expected a positive duration such as 90s, 10m or 1h, got '" + *s + "'");
      else
        ex.timeout_s = *d;
    }
  }

  if (const YAML::Node refs = root["references"]) {
    if (!refs.IsMap())
      p.issue(refs, "references", "expected a mapping of metric: {target, lower, upper, unit, better}");
    else
      for (auto it = refs.begin(); it != refs.end(); ++it) {
        Reference r;
        r.metric = it->first.Scalar();
        std::string f = "references." + r.metric;
        const YAML::Node body = it->second;
        if (!p.check_keys(body, f, {"target", "lower", "upper", "unit", "better", "where"})) continue;
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
          if (r.upper && *r.upper < 0)
            p.issue(body["upper"], f + ".upper", "a fraction at or over 0, e.g. 0.05 for 5% over");
        }
        if (body["unit"])
          if (auto u = p.scalar(body["unit"], f + ".unit")) r.unit = *u;
        if (body["better"]) {
          ParamDef def{"better", ParamType::kEnum, {}, {"higher", "lower"}, {}, ""};
          if (auto b = p.typed(def, body["better"], f + ".better")) r.better = *b;
        }
        if (const YAML::Node w = body["where"]) {
          if (!w.IsMap())
            p.issue(w, f + ".where", "expected a mapping of parameter: value");
          else
            for (auto e = w.begin(); e != w.end(); ++e) {
              std::string key = e->first.Scalar();
              const ParamDef* def = wl ? wl->find(key) : nullptr;
              if (key == "size") {
                ParamDef sdef{"size", ParamType::kSize, {}, {}, std::nullopt, ""};
                if (auto v = p.typed(sdef, e->second, f + ".where.size")) r.where[key] = *v;
              } else if (key == "variant" || key == "gpus" || key == "ranks") {
                if (auto v = p.scalar(e->second, f + ".where." + key)) r.where[key] = *v;
              } else if (def) {
                if (auto v = p.typed(*def, e->second, f + ".where." + key)) r.where[key] = *v;
              } else {
                p.issue_at(e->first.Mark(), f + ".where." + key,
                           "unknown; use a workload parameter, size, variant, gpus or ranks");
              }
            }
        }
        ex.references.push_back(std::move(r));
      }
  }

  // Placeholders of every command block name parameters that the runs will have.
  std::set<std::string> names;
  for (const auto& [k, v] : ex.params.items()) names.insert(k);
  for (const auto& a : ex.matrix) names.insert(a.param);
  for (const auto& a : ex.zip) names.insert(a.param);
  for (const auto& v : ex.variants)
    for (const auto& [k, val] : v.params.items()) names.insert(k);
  if (ex.command) check_placeholders(p, node_at(root, {"command"}), "command", *ex.command, names);
  for (const auto& v : ex.variants)
    if (v.command)
      check_placeholders(p, node_at(root, {"variants", v.name, "command"}), "variants." + v.name + ".command",
                         *v.command, names);

  constexpr int kMaxRuns = 100000;  // docs/experiments.md#validation-errors
  // An upper bound of the runs it expands into (every placement, point, round and variant), so
  // that a typo such as "rounds: 1000000" is refused here instead of filling the coordinator.
  if (p.ok()) {
    double runs = static_cast<double>(ex.placement.nodes.size()) *
                  static_cast<double>(std::max(ex.placement.gpus_per_node.size(), ex.placement.ranks_per_node.size())) *
                  std::max<double>(1, static_cast<double>(ex.variants.size())) * ex.rounds;
    for (const auto& axis : ex.matrix) runs *= static_cast<double>(axis.values.size());
    if (!ex.zip.empty()) runs *= static_cast<double>(ex.zip.front().values.size());
    if (runs > kMaxRuns)
      p.issue(root, "",
              "expands into up to " + std::to_string(static_cast<long long>(std::min(runs, 1e18))) +
                  " runs (placements x sweep points x rounds x variants); at most " + std::to_string(kMaxRuns) +
                  " are allowed");
  }
  if (!p.ok()) throw SpecError(p.take());
  return ex;
}

Experiment load_experiment_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the experiment file");
  // No more than the limit and one byte: /dev/zero or a 50 GB file is refused after 1 MiB.
  const std::size_t cap = YamlLimits{}.max_bytes + 1;
  std::string text(cap, '\0');
  in.read(text.data(), static_cast<std::streamsize>(cap));
  if (in.bad()) throw Error(path + ": cannot read the experiment file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_experiment(text, path);
}

std::vector<std::string> split_yaml_documents(std::string_view text) {
  std::vector<std::string> docs;
  std::string current;
  int line_no = 0;
  bool has_content = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    const bool separator = line.substr(0, 3) == "---" && line.find_first_not_of(' ', 3) == std::string_view::npos;
    if (separator) {
      if (has_content) docs.push_back(current);
      current.assign(static_cast<std::size_t>(line_no + 1), '\n');  // keep later lines where they are
      has_content = false;
    } else {
      current.append(line);
      current.push_back('\n');
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && line[first] != '#') has_content = true;
    }
    ++line_no;
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (has_content || docs.empty()) docs.push_back(current);
  return docs;
}

}  // namespace scalebench
