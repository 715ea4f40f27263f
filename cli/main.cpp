// scalebench: the command-line interface (study, submit, status, wait, results, ratio, report,
// compare, accept, predict, predictions, agents, cancel, testbed).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/process.hpp"
#include "common/program_options.hpp"

namespace {

int dispatch(const scalebench::CliArgs& a) {
  using namespace scalebench;
  if (a.command == "study") return cmd_study(a);
  if (a.command == "submit") return cmd_submit(a);
  if (a.command == "status") return cmd_status(a);
  if (a.command == "wait") return cmd_wait(a);
  if (a.command == "results") return cmd_results(a);
  if (a.command == "agents") return cmd_agents(a);
  if (a.command == "ratio") return cmd_ratio(a);
  if (a.command == "cancel") return cmd_cancel(a);
  if (a.command == "report") return cmd_report(a);
  if (a.command == "compare") return cmd_compare(a);
  if (a.command == "accept") return cmd_accept(a);
  if (a.command == "predict") return cmd_predict(a);
  if (a.command == "predictions") return cmd_predictions(a);
  std::cout << version_line("scalebench") << "\n";  // `version`, the only other command declared
  return 0;
}

// `scalebench testbed ...`: the testbed is a script of system commands (ip, tc, nsenter, sshd)
// installed beside this program; it takes the rest of the command line as it is.
int exec_testbed(int argc, char** argv) {
  const std::string script = scalebench::executable_dir() + "/scalebench-testbed";
  std::vector<char*> args{const_cast<char*>(script.c_str())};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(script.c_str(), args.data());
  std::cerr << "scalebench: cannot run " << script << ": " << std::strerror(errno) << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  if (argc >= 2 && std::string_view(argv[1]) == "testbed") return exec_testbed(argc, argv);
  CliArgs a;
  if (auto done = parse_command_line(argc, argv, a)) return *done;
  // The exit code follows the error's type: the network's or the coordinator's trouble is 4,
  // bad input or usage (a malformed URL included) is 2.
  try {
    return dispatch(a);
  } catch (const Interrupted& e) {
    std::cerr << "scalebench: " << e.what() << "\n";
    return 130;
  } catch (const SpecError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const UnreachableError& e) {
    std::cerr << "scalebench: " << e.what() << "\n";
    return 4;
  } catch (const RefusedError& e) {
    // 400 and 404 answer what the user asked for (a bad file, an experiment that is not there).
    std::cerr << "scalebench: " << e.what() << "\n";
    return e.status() == 400 || e.status() == 404 ? 2 : 4;
  } catch (const Error& e) {
    std::cerr << "scalebench: " << e.what() << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A folder or file of ours that cannot be made or read (--db, --logs): bad input, 2.
    std::cerr << "scalebench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // Anything else comes from an answer that is not what the API promises (a JSON field
    // missing or of another type): the coordinator's trouble.
    std::cerr << "scalebench: " << e.what() << "\n";
    return 4;
  }
}
