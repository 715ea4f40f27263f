#include "experiment/command_spec.hpp"

#include "common/error.hpp"

namespace scalebench {

const std::vector<std::string>& command_builtin_vars() {
  static const std::vector<std::string> v{"gpus",        "gpus_per_node", "nodes",       "ranks",  "ranks_per_node",
                                          "variant",     "round",         "repetitions", "run_id", "output_dir",
                                          "master_addr", "master_port",   "node_rank"};
  return v;
}

Json to_json(const CommandSpec& c) {
  Json figures = Json::array();
  for (const auto& f : c.figures)
    figures.push_back(Json{{"name", f.name},
                           {"regex", f.regex},
                           {"value_group", f.value_group},
                           {"context", f.context},
                           {"unit", f.unit},
                           {"better", f.better}});
  return Json{{"program", c.program},         {"args", c.args},    {"launch", c.launch}, {"parser", c.parser},
              {"output_file", c.output_file}, {"figures", figures}};
}

CommandSpec command_from_json(const Json& j) {
  try {
    CommandSpec c;
    c.program = j.at("program").get<std::string>();
    c.args = j.value("args", std::vector<std::string>{});
    c.launch = j.value("launch", std::string("mpi"));
    c.parser = j.value("parser", std::string());
    c.output_file = j.value("output_file", std::string());
    for (const auto& f : j.value("figures", Json::array())) {
      Figure fig;
      fig.name = f.at("name").get<std::string>();
      fig.regex = f.at("regex").get<std::string>();
      fig.value_group = f.value("value_group", 1);
      fig.context = f.value("context", std::map<std::string, int>{});
      fig.unit = f.value("unit", std::string());
      fig.better = f.value("better", std::string("higher"));
      c.figures.push_back(std::move(fig));
    }
    return c;
  } catch (const Json::exception& e) {
    throw Error(std::string("run spec: the command block is malformed: ") + e.what());
  }
}

namespace {
// Walks `text`, handing literal pieces and placeholder names to the callbacks.
template <class Literal, class Name>
void scan(const std::string& text, Literal literal, Name name) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal(c);
      ++i;
    } else if (c == '{') {
      const auto close = text.find('}', i);
      if (close == std::string::npos) throw Error("'" + text + "': '{' without '}' (write {{ for a brace)");
      const std::string n = text.substr(i + 1, close - i - 1);
      if (n.empty() || n.find('{') != std::string::npos)
        throw Error("'" + text + "': an empty or nested placeholder (write {{ for a brace)");
      name(n);
      i = close;
    } else if (c == '}') {
      throw Error("'" + text + "': '}' without '{' (write }} for a brace)");
    } else {
      literal(c);
    }
  }
}
}  // namespace

std::vector<std::string> placeholders(const std::string& text) {
  std::vector<std::string> out;
  scan(
      text, [](char) {}, [&](const std::string& n) { out.push_back(n); });
  return out;
}

std::string substitute(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  scan(
      text, [&](char c) { out += c; },
      [&](const std::string& n) {
        auto it = vars.find(n);
        if (it == vars.end()) throw Error("'" + text + "': no value for {" + n + "}");
        out += it->second;
      });
  return out;
}

}  // namespace scalebench
