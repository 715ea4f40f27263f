#pragma once
#include <optional>

#include "cli/commands.hpp"

namespace scalebench {

// Parses scalebench's command line (CLI11: a subcommand each, with its own options, --help and
// examples) into `args`, the interface the cmd_* functions read. Returns an exit code when the
// program is done already (--help or --version: 0; bad usage: 2, the message naming the option).
std::optional<int> parse_command_line(int argc, char** argv, CliArgs& args);

}  // namespace scalebench
