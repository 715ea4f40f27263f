#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// The `command` workload: any program, launched on the run's GPUs, whose figures are read from
// its output (docs/command.md is the reference for every key).

// A figure of merit: a regular expression (ECMAScript, searched in each line of the output) whose
// capture group `value_group` holds the number. Every match is a sample; with `context`, matches
// are grouped by the values of those capture groups (point fields, e.g. size: 1) into one record
// each, as a program printing one line per message size gives one record per size.
struct Figure {
  std::string name;
  std::string regex;
  int value_group = 1;
  std::map<std::string, int> context;  // point field -> capture group
  std::string unit;
  std::string better = "higher";  // higher | lower
};

struct CommandSpec {
  std::string program;
  std::vector<std::string> args;  // {param} placeholders, substituted per run
  // mpi: under mpirun, one process per GPU (or per host rank); ranks: one process per GPU started
  // directly with torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT);
  // once: a single process per node (which may itself be torchrun), with MASTER_ADDR/PORT.
  std::string launch = "mpi";
  // Ready-made readers of known outputs: nccl-tests (its table), nccl-tests-json (its -J file),
  // images-per-second (a training script's "images/s: N" or "total images/sec: N"), mllog (MLPerf's
  // ":::MLLOG" event log: time to train over the runs it holds).
  std::string parser;
  std::string output_file;  // read figures from this file (after the program ends) instead of stdout
  std::vector<Figure> figures;
};

inline const std::vector<std::string>& command_launches() {
  static const std::vector<std::string> v{"mpi", "ranks", "once"};
  return v;
}
inline const std::vector<std::string>& command_parsers() {
  static const std::vector<std::string> v{"nccl-tests", "nccl-tests-json", "images-per-second", "mllog"};
  return v;
}

// Placeholders every run offers besides its parameters.
const std::vector<std::string>& command_builtin_vars();

Json to_json(const CommandSpec& c);
// The inverse of to_json; throws Error naming the field that is missing or wrong.
CommandSpec command_from_json(const Json& j);

// The names of `text`'s {placeholders}, in order ("{{" and "}}" are literal braces). Throws Error
// for an unclosed or empty brace.
std::vector<std::string> placeholders(const std::string& text);
// `text` with every {name} replaced by vars[name]; throws Error naming a placeholder without value.
std::string substitute(const std::string& text, const std::map<std::string, std::string>& vars);

}  // namespace scalebench
