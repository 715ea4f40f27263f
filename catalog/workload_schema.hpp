#pragma once
#include <string>
#include <string_view>

#include "catalog/registry.hpp"
#include "common/json.hpp"

namespace scalebench {

// Typed parameters as experiment files and `scalebench-run -p` write them. The workloads and
// their parameters are declared in the registry (catalog/registry.hpp), which this
// header brings in for the experiment parser.

// Converts a scalar written in YAML (always text there) to its typed JSON value; sizes become
// bytes. Returns the error message instead when the text does not fit the type.
struct ParamValue {
  Json value;
  std::string error;
};
ParamValue parse_param(const ParamDef& def, std::string_view text);

}  // namespace scalebench
