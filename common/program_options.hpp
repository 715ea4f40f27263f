#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.hpp"

namespace scalebench {

// "error", "warn", "info" or "debug"; nothing for anything else.
std::optional<log::Level> parse_log_level(std::string_view name);

// What every program of scalebench answers the same way: --version (PROGRAM VERSION (REVISION))
// and --log-level error|warn|info|debug, applied as soon as it is parsed.
void add_standard_options(CLI::App& app, const std::string& program);

// argv[1..] as CLI::App::parse(std::vector) takes them (last first), with the value after each of
// the options `verbatim` joined to it ("--mpirun-arg --hostfile" -> "--mpirun-arg=--hostfile"), so
// that an option's value may itself start with a dash, as a pass-through argument does.
std::vector<std::string> parse_arguments(int argc, char** argv, const std::vector<std::string>& verbatim);

// The line --version and `scalebench version` print.
std::string version_line(const std::string& program);

// Ends a failed parse the operators' way: --help and --version print to stdout and give 0; a bad,
// unknown or inapplicable option prints PROGRAM: MESSAGE naming it, and where to read more, and
// gives 2 (bad usage).
int parse_failure(const CLI::App& app, const CLI::ParseError& e, const std::string& program);

}  // namespace scalebench
