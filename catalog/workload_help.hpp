#pragma once
// What `scalebench-run --list` and `scalebench-run WORKLOAD --help` print, from the registry's
// declarations (the one place parameters, defaults and allowed values are written).
#include <string>

#include "catalog/registry.hpp"

namespace scalebench {

// A parameter's allowed values: "a|b|c", "size >= 1", "integer 0..8", "true|false", ...
std::string allowed_values(const ParamDef& p);

// The workload's purpose, then a line per parameter: name, default, allowed values, help.
std::string workload_help(const WorkloadDef& def);

// A line per workload, its name and purpose; `built(name)` false marks one this program lacks.
std::string workload_list(bool (*built)(const std::string& name));

}  // namespace scalebench
