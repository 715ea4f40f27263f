#include "experiment/spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "common/utf8.hpp"
#include "experiment/spec_command.hpp"
#include "experiment/spec_parser.hpp"
#include "experiment/spec_references.hpp"

namespace scalebench {
namespace {

const std::set<std::string> kTopKeys = {"name",   "description", "workload",   "command",  "params",
                                        "matrix", "zip",         "placement",  "variants", "repetitions",
                                        "rounds", "timeout",     "references", "priority", "retries"};

void parse_params(SpecParser& p, const WorkloadDef& wl, const YAML::Node& node, const std::string& field, Json& out) {
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
    const std::string name = wl.current_name(key);
    if (name != key && node[name])
      p.issue_at(it->first.Mark(), field + "." + key, "the former name of '" + name + "', which is given too");
    else if (auto v = p.typed(*def, it->second, field + "." + key))
      out[name] = *v;
  }
}

std::vector<SweepAxis> parse_axes(SpecParser& p, const WorkloadDef& wl, const YAML::Node& node,
                                  const std::string& field) {
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
    axes.push_back({wl.current_name(key), p.typed_list(*def, it->second, field + "." + key)});
  }
  return axes;
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

// The YAML node's position, 1-based; 1:1 for a node that has none (an empty document).
std::pair<int, int> position_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return {m.line >= 0 ? m.line + 1 : 1, m.column >= 0 ? m.column + 1 : 1};
}

// Experiment files are stored and served as JSON strings, which hold UTF-8 only.
void check_utf8(std::string_view yaml_text, std::string_view source_name) {
  const std::size_t bad = first_invalid_utf8(yaml_text);
  if (bad == std::string_view::npos) return;
  const std::string_view before = yaml_text.substr(0, bad);
  const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n');
  const int column = static_cast<int>(bad - (line_start == std::string_view::npos ? 0 : line_start + 1)) + 1;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(yaml_text[bad]));
  throw SpecError({{std::string(source_name), line, column, "",
                    std::string("not UTF-8 text (byte ") + byte + "); experiment files are UTF-8"}});
}

// The document's root mapping (the text has passed check_yaml_bounds).
YAML::Node load_root(std::string_view yaml_text, std::string_view source_name) {
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
  return root;
}

// The root's lookups below are the non-const ones that parse_experiment always made.
void parse_name(SpecParser& p, YAML::Node& root, Experiment& ex) {
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
}

// The workload's declaration; nullptr when it is missing or unknown (the issue is recorded).
const WorkloadDef* parse_workload(SpecParser& p, YAML::Node& root, Experiment& ex) {
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
  return wl;
}

void parse_zip(SpecParser& p, const WorkloadDef& wl, YAML::Node& root, Experiment& ex) {
  ex.zip = parse_axes(p, wl, root["zip"], "zip");
  for (const auto& a : ex.zip)
    if (a.values.size() != ex.zip.front().values.size())
      p.issue(root["zip"][a.param], "zip." + a.param,
              "zip lists move in lock-step and must have the same length (" +
                  std::to_string(ex.zip.front().values.size()) + " for '" + ex.zip.front().param + "', " +
                  std::to_string(a.values.size()) + " here)");
  for (const auto& a : ex.zip)
    for (const auto& m : ex.matrix)
      if (a.param == m.param) p.issue(root["zip"][a.param], "zip." + a.param, "parameter is also swept in 'matrix'");
}

// params (over the workload's defaults), matrix and zip, and the workload's checks of the set.
void parse_params_and_sweep(SpecParser& p, const WorkloadDef& wl, YAML::Node& root, Experiment& ex) {
  for (const auto& d : wl.params) ex.params[d.name] = d.default_value;
  if (root["params"]) parse_params(p, wl, root["params"], "params", ex.params);
  if (root["matrix"]) ex.matrix = parse_axes(p, wl, root["matrix"], "matrix");
  if (root["zip"]) parse_zip(p, wl, root, ex);
  std::string cross = check_param_set(wl, ex.params);
  if (!cross.empty()) p.issue(root["params"] ? root["params"] : root, "params", cross);
}

void parse_experiment_command(SpecParser& p, const WorkloadDef* wl, YAML::Node& root, Experiment& ex) {
  if (root["command"]) {
    if (ex.workload == "command")
      ex.command = parse_command(p, root["command"], "command");
    else if (wl)
      p.issue(root["command"], "command",
              "a command block belongs to 'workload: command' (or to a variant with 'workload: command')");
  } else if (ex.workload == "command") {
    p.issue(root, "command", "missing; workload command needs the program to run and how to read its figures");
  }
}

void parse_gpus_per_node(SpecParser& p, const YAML::Node& g, Placement& placement) {
  ParamDef def{"gpus_per_node", ParamType::kInt, {}, {}, 1.0, "", kIntMax};
  placement.gpus_per_node.clear();
  auto one = [&](const YAML::Node& n, const std::string& f) {
    if (n.IsScalar() && n.Scalar() == "all")
      placement.gpus_per_node.push_back("all");
    else if (auto v = p.typed(def, n, f))
      placement.gpus_per_node.push_back(*v);
  };
  if (g.IsSequence() && g.size() == 0) p.issue(g, "placement.gpus_per_node", "empty list");
  if (g.IsSequence())
    for (std::size_t i = 0; i < g.size(); ++i) one(g[i], "placement.gpus_per_node[" + std::to_string(i) + "]");
  else
    one(g, "placement.gpus_per_node");
}

// The agents a run may use, by name (acceptance pins each node's checks to its agent).
void parse_agents(SpecParser& p, const YAML::Node& a, Placement& placement) {
  if (!a.IsSequence() || a.size() == 0) p.issue(a, "placement.agents", "expected a non-empty list of agent names");
  for (std::size_t i = 0; a.IsSequence() && i < a.size(); ++i) {
    if (!a[i].IsScalar() || a[i].Scalar().empty())
      p.issue(a[i], "placement.agents[" + std::to_string(i) + "]", "expected an agent name");
    else
      placement.agents.push_back(a[i].Scalar());
  }
}

void parse_placement(SpecParser& p, const YAML::Node& pl, Placement& placement) {
  if (!p.check_keys(pl, "placement", {"nodes", "gpus_per_node", "ranks_per_node", "oversize", "agents"})) return;
  if (pl["nodes"]) {
    placement.nodes = p.int_list(pl["nodes"], "placement.nodes", 1);
    for (int n : placement.nodes)
      if (n > kMaxNodes)
        p.issue(pl["nodes"], "placement.nodes",
                std::to_string(n) + " nodes is over the limit of " + std::to_string(kMaxNodes) + " per run");
  }
  if (pl["gpus_per_node"]) parse_gpus_per_node(p, pl["gpus_per_node"], placement);
  if (pl["ranks_per_node"]) placement.ranks_per_node = p.int_list(pl["ranks_per_node"], "placement.ranks_per_node", 1);
  if (const YAML::Node a = pl["agents"]) parse_agents(p, a, placement);
  if (pl["oversize"]) {
    ParamDef def{"oversize", ParamType::kEnum, {}, {"fail", "skip"}, {}, ""};
    if (auto v = p.typed(def, pl["oversize"], "placement.oversize")) placement.oversize = *v;
  }
}

// A variant's workload and command: its own program, or the experiment's workload.
void parse_variant_program(SpecParser& p, const YAML::Node& body, const std::string& f, const Experiment& ex,
                           Variant& v) {
  if (body["workload"]) {
    if (auto w = p.scalar(body["workload"], f + ".workload")) {
      if (*w != "command" && *w != ex.workload)
        p.issue(body["workload"], f + ".workload",
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
}

// transport sets the NCCL variables that ask for it; env is written over them.
void parse_variant_env(SpecParser& p, const YAML::Node& body, const std::string& f, Variant& v) {
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
}

// One variant; nullopt when its body is not a mapping of the known keys (the issue is recorded).
std::optional<Variant> parse_variant(SpecParser& p, const WorkloadDef* wl, const std::string& name,
                                     const YAML::Node& body, const Experiment& ex) {
  Variant v;
  v.name = name;
  std::string f = "variants." + v.name;
  if (body.IsNull()) return v;
  if (!p.check_keys(body, f, {"env", "params", "when", "transport", "workload", "command"})) return std::nullopt;
  parse_variant_program(p, body, f, ex, v);
  parse_variant_env(p, body, f, v);
  if (body["params"] && wl) parse_params(p, *wl, body["params"], f + ".params", v.params);
  if (body["when"]) {
    ParamDef def{"when", ParamType::kEnum, {}, {"any", "gpu", "host"}, {}, ""};
    if (auto w = p.typed(def, body["when"], f + ".when")) v.when = *w;
  }
  return v;
}

void parse_variants(SpecParser& p, const WorkloadDef* wl, const YAML::Node& vs, Experiment& ex) {
  if (!vs.IsMap()) {
    p.issue(vs, "variants", "expected a mapping of name: {env: {...}, params: {...}}");
    return;
  }
  for (auto it = vs.begin(); it != vs.end(); ++it)
    if (auto v = parse_variant(p, wl, it->first.Scalar(), it->second, ex)) ex.variants.push_back(std::move(*v));
}

// repetitions, rounds, priority, retries and timeout.
void parse_run_settings(SpecParser& p, YAML::Node& root, Experiment& ex) {
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
}

// Placeholders of every command block name parameters that the runs will have.
void check_command_placeholders(SpecParser& p, YAML::Node& root, const Experiment& ex) {
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
}

// An upper bound of the runs it expands into (every placement, point, round and variant), so
// that a typo such as "rounds: 1000000" is refused here instead of filling the coordinator.
void check_run_count(SpecParser& p, YAML::Node& root, const Experiment& ex) {
  constexpr int kMaxRuns = 100000;  // docs/experiments.md#validation-errors
  const double runs = run_count_bound(ex);
  if (runs > kMaxRuns)
    p.issue(root, "",
            "expands into up to " + std::to_string(static_cast<long long>(std::min(runs, 1e18))) +
                " runs (placements x sweep points x rounds x variants); at most " + std::to_string(kMaxRuns) +
                " are allowed");
}

}  // namespace

double run_count_bound(const Experiment& ex) {
  double runs = static_cast<double>(ex.placement.nodes.size()) *
                static_cast<double>(std::max(ex.placement.gpus_per_node.size(), ex.placement.ranks_per_node.size())) *
                std::max<double>(1, static_cast<double>(ex.variants.size())) * ex.rounds;
  for (const auto& axis : ex.matrix) runs *= static_cast<double>(axis.values.size());
  if (!ex.zip.empty()) runs *= static_cast<double>(ex.zip.front().values.size());
  return runs;
}

std::map<std::string, std::string> transport_env(const std::string& transport) {
  if (transport == "pcie") return {{"NCCL_P2P_DISABLE", "1"}};
  if (transport == "net") return {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}};
  if (transport == "p2p-pcie") return {{"NCCL_P2P_LEVEL", "PXB"}};
  return {};
}

Experiment parse_experiment(std::string_view yaml_text, std::string_view source_name) {
  check_utf8(yaml_text, source_name);
  check_yaml_bounds(yaml_text, source_name);
  SpecParser p{std::string(source_name)};
  YAML::Node root = load_root(yaml_text, source_name);
  Experiment ex;
  ex.source = std::string(source_name);
  p.check_keys(root, "", kTopKeys);
  if (!p.check_duplicate_keys(root, "")) throw SpecError(p.take());

  parse_name(p, root, ex);
  const WorkloadDef* wl = parse_workload(p, root, ex);
  if (wl) parse_params_and_sweep(p, *wl, root, ex);
  parse_experiment_command(p, wl, root, ex);
  if (const YAML::Node pl = root["placement"]) parse_placement(p, pl, ex.placement);
  if (const YAML::Node vs = root["variants"]) parse_variants(p, wl, vs, ex);
  parse_run_settings(p, root, ex);
  if (const YAML::Node refs = root["references"]) parse_references(p, wl, refs, ex);
  check_command_placeholders(p, root, ex);
  if (p.ok()) check_run_count(p, root, ex);
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
