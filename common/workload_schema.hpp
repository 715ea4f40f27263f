#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// The parameters each workload accepts. Lives in common/ so that the coordinator and the CLI
// validate an experiment file without linking the workloads themselves.
// kText: a value of a free parameter (the command workload's): an integer, a number, else text.
enum class ParamType { kInt, kSize, kNumber, kBool, kEnum, kIntOrAuto, kText };

struct ParamDef {
  std::string name;
  ParamType type;
  Json default_value;
  std::vector<std::string> choices;  // kEnum only
  std::optional<double> min;         // numeric types
  std::string help;
  std::optional<double> max = std::nullopt;  // kInt and kNumber (its initializer: no warning where a def leaves it out)
};

struct WorkloadDef {
  std::string name;
  std::string help;
  std::vector<ParamDef> params;
  // Any parameter name is accepted (as kText) besides `params`: the command workload's
  // parameters are whatever its program's arguments use.
  bool free_params = false;
  // The definition of `param`: its own, a kText one when free_params, else null.
  const ParamDef* find(std::string_view param) const;
};

const std::vector<WorkloadDef>& workload_defs();
const WorkloadDef* find_workload(std::string_view name);

// Converts a scalar written in YAML (always text there) to its typed JSON value; sizes become
// bytes. Returns the error message instead when the text does not fit the type.
struct ParamValue {
  Json value;
  std::string error;
};
ParamValue parse_param(const ParamDef& def, std::string_view text);

// How many processes a GPU run of `workload` starts per node for `gpus` GPUs (one per GPU unless
// a process drives several, or the workload runs as one process over all of them). Sets *why and
// returns `gpus` when the parameters cannot be laid out on that many GPUs.
int processes_per_node(std::string_view workload, const Json& params, int gpus, std::string* why);

// Checks that hold between parameters (min_bytes <= max_bytes, ...); empty when fine.
std::string check_param_set(const WorkloadDef& def, const Json& params);

}  // namespace scalebench
