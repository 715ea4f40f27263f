#include "common/program_options.hpp"

#include <stdlib.h>

#include <algorithm>
#include <iostream>

#include "common/version.hpp"

namespace scalebench {

std::optional<log::Level> parse_log_level(std::string_view name) {
  if (name == "error") return log::Level::kError;
  if (name == "warn") return log::Level::kWarn;
  if (name == "info") return log::Level::kInfo;
  if (name == "debug") return log::Level::kDebug;
  return std::nullopt;
}

std::string version_line(const std::string& program) { return program + " " + kVersion + " (" + git_revision() + ")"; }

void add_standard_options(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", version_line(program), "print the version and the git revision, then exit");
  // Also from $SCALEBENCH_LOG_LEVEL, which it sets in turn: the programs this one starts (the
  // local coordinator and agent of `scalebench study`, an agent's runs) log the same way.
  app.add_option_function<std::string>(
         "--log-level",
         [](const std::string& name) {
           log::set_level(*parse_log_level(name));
           setenv("SCALEBENCH_LOG_LEVEL", name.c_str(), 1);
         },
         "what goes to the log on stderr: error, warn, info (default) or debug")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))
      ->envname("SCALEBENCH_LOG_LEVEL")
      ->type_name("LEVEL");
}

std::vector<std::string> parse_arguments(int argc, char** argv, const std::vector<std::string>& verbatim) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 < argc && std::find(verbatim.begin(), verbatim.end(), a) != verbatim.end())
      a += "=" + std::string(argv[++i]);
    args.push_back(std::move(a));
  }
  std::reverse(args.begin(), args.end());
  return args;
}

int parse_failure(const CLI::App& app, const CLI::ParseError& e, const std::string& program) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
  // Where to read more: the command's own help when one was named.
  const auto commands = app.get_subcommands();
  const std::string help = program + (commands.empty() ? "" : " " + commands.front()->get_name()) + " --help";
  std::cerr << program << ": " << e.what() << "\n" << program << ": see " << help << "\n";
  return 2;
}

}  // namespace scalebench
