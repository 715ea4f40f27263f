#include "experiment/spec_command.hpp"

#include <algorithm>
#include <regex>
#include <vector>

namespace scalebench {
namespace {

void parse_program(SpecParser& p, const YAML::Node& node, const std::string& field, CommandSpec& c, bool& ok) {
  if (!node["program"]) {
    p.issue(node, field + ".program", "missing; the program to run, e.g. all_reduce_perf or python3");
    ok = false;
  } else if (auto s = p.scalar(node["program"], field + ".program")) {
    c.program = *s;
  }
}

void parse_args(SpecParser& p, const YAML::Node& node, const std::string& field, CommandSpec& c) {
  if (const YAML::Node args = node["args"]) {
    if (!args.IsSequence())
      p.issue(args, field + ".args", "expected a list of arguments, e.g. [-b, \"{min_bytes}\", -e, 1G]");
    else
      for (std::size_t i = 0; i < args.size(); ++i)
        if (auto s = p.scalar(args[i], field + ".args[" + std::to_string(i) + "]")) c.args.push_back(*s);
  }
}

// launch, parser and output_file: how the program runs and where its figures are read.
void parse_launch_and_output(SpecParser& p, const YAML::Node& node, const std::string& field, CommandSpec& c) {
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
}

// One entry of `figures:`; nullopt when its regex does not compile (the issue is recorded).
std::optional<Figure> parse_figure(SpecParser& p, const std::string& name, const YAML::Node& body,
                                   const std::string& ff) {
  Figure f;
  f.name = name;
  unsigned groups = 0;
  if (!body["regex"]) {
    p.issue(body, ff + ".regex", "missing; a regular expression whose first group captures the number");
  } else if (auto r = p.scalar(body["regex"], ff + ".regex")) {
    f.regex = *r;
    try {
      groups = static_cast<unsigned>(std::regex(f.regex).mark_count());
    } catch (const std::regex_error& e) {
      p.issue(body["regex"], ff + ".regex", std::string("not a valid regular expression: ") + e.what());
      return std::nullopt;
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
  return f;
}

void parse_figures(SpecParser& p, const YAML::Node& node, const std::string& field, CommandSpec& c) {
  const YAML::Node figs = node["figures"];
  if (!figs) return;
  if (!figs.IsMap()) {
    p.issue(figs, field + ".figures", "expected a mapping of name: {regex, value_group, context, unit, better}");
    return;
  }
  for (auto it = figs.begin(); it != figs.end(); ++it) {
    const std::string name = it->first.Scalar();
    const std::string ff = field + ".figures." + name;
    const YAML::Node body = it->second;
    if (!p.check_keys(body, ff, {"regex", "value_group", "context", "unit", "better"})) continue;
    if (auto f = parse_figure(p, name, body, ff)) c.figures.push_back(std::move(*f));
  }
}

}  // namespace

std::optional<CommandSpec> parse_command(SpecParser& p, const YAML::Node& node, const std::string& field) {
  if (!p.check_keys(node, field, {"program", "args", "launch", "parser", "output_file", "figures"}))
    return std::nullopt;
  CommandSpec c;
  bool ok = true;
  parse_program(p, node, field, c, ok);
  parse_args(p, node, field, c);
  parse_launch_and_output(p, node, field, c);
  parse_figures(p, node, field, c);
  if (c.parser.empty() && c.figures.empty())
    p.issue(node, field,
            "give a parser (" + std::string("nccl-tests, nccl-tests-json, images-per-second, mllog") +
                ") or figures to read from the program's output");
  if (!ok) return std::nullopt;
  return c;
}

void check_placeholders(SpecParser& p, const YAML::Node& node, const std::string& field, const CommandSpec& c,
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

}  // namespace scalebench
