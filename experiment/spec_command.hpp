#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>

#include "experiment/command_spec.hpp"
#include "experiment/spec_parser.hpp"

namespace scalebench {

// The `command:` block of an experiment or a variant.
std::optional<CommandSpec> parse_command(SpecParser& p, const YAML::Node& node, const std::string& field);

// Every {placeholder} of a command names a parameter of the run or a built-in one.
void check_placeholders(SpecParser& p, const YAML::Node& node, const std::string& field, const CommandSpec& c,
                        const std::set<std::string>& params);

}  // namespace scalebench
