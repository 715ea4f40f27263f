// scalebench: the command-line interface (study, submit, status, results, agents, cancel).
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

namespace {
const char* kUsage = R"(usage: scalebench COMMAND [ARGS] [OPTIONS]
  study FILE.yaml [--db FILE] [--logs DIR]   run an experiment standalone on this machine (a local
                                             coordinator and agent on loopback) and print its results
  submit FILE.yaml [--coordinator URL]       queue an experiment on a running coordinator
  status [EXPERIMENT] [--coordinator URL | --db FILE]
  results [--experiment NAME|ID] [--format table|json|csv] [--coordinator URL | --db FILE]
  ratio [--experiment NAME|ID] [--variants A,B] [--metric M] [--ignore-params P,Q] [--format table|json|csv]
        [--coordinator URL | --db FILE]      A/B ratio per point (default nvlink,pcie on busbw) with a
                                             95% CI from interleaved rounds (or the samples of one round)
  report [--experiment NAME|ID] [--out DIR] [--title TEXT] [--coordinator URL | --db FILE | --records FILE]
                                             an HTML page (with SVG charts), Markdown, CSV, JSON and
                                             PNG charts of the experiment(s) in DIR (default report/);
                                             --records reads `results --format json` output (- = stdin)
  compare BASELINE CANDIDATE | compare CANDIDATE --baseline FILE [--tolerance PCT] [--metric M]
        [--ignore-params P,Q] [--format table|csv|json] [--outliers] [--outlier-threshold PCT]
        [--coordinator URL | --db FILE]      each metric's change per point between two experiments
                                             (name or id), or against FILE (`results --format json`
                                             output), with a 95% noise band, worst first; exit 1 on a
                                             regression beyond the tolerance (default 5%; a reference's
                                             wins) and the noise, 3 when no point is in both
  accept [--level quick|standard|long] [--rules FILE] [--baseline FILE] [--json FILE] [--drain]
        [--coordinator URL | --db FILE]      the acceptance battery on every agent, a verdict per GPU
                                             and node, and which node to drain (scalebench accept --help)
  agents [--coordinator URL]
  cancel EXPERIMENT [--coordinator URL]
  version                                    (also --version)
The coordinator URL defaults to $SCALEBENCH_COORDINATOR, else http://127.0.0.1:8470. A coordinator
that wants tokens gets the one in --token-file FILE, else $SCALEBENCH_TOKEN (a user token to submit
and cancel, a read token to look). An https:// coordinator's certificate is checked against
--ca-file FILE, else $SCALEBENCH_CA_FILE, else the system's trusted certificates.
Exit codes: 0 ok; 1 a reference failed; 2 bad usage or input; 3 runs failed or timed out;
4 the coordinator could not be reached or refused; 5 `results --db` read a damaged store in part
(the records it could read are printed; stderr names the record ids it could not).
)";
const std::set<std::string> kValueOptions = {"db",       "coordinator",   "format",   "experiment", "logs",
                                             "variants", "ignore-params", "metric",   "token-file", "out",
                                             "records",  "title",         "baseline", "tolerance",  "outlier-threshold",
                                             "ca-file",  "level",         "rules",    "json"};
// Options that take no value.
const std::set<std::string> kFlagOptions = {"outliers", "drain"};
}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  CliArgs a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-h" || s == "--help") {
      std::cout << (a.command == "accept" ? accept_help() : kUsage);
      return 0;
    }
    if (s == "--version") {  // as every other program of ours answers it
      std::cout << "scalebench " << kVersion << " (" << kGitRevision << ")\n";
      return 0;
    }
    if (s.rfind("--", 0) == 0) {
      std::string key = s.substr(2), value;
      auto eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else if (kValueOptions.count(key)) {
        if (i + 1 >= argc) {
          std::cerr << "scalebench: --" << key << " needs a value\n";
          return 2;
        }
        value = argv[++i];
      }
      if (!kValueOptions.count(key) && !kFlagOptions.count(key)) {
        std::cerr << "scalebench: unknown option --" << key << "\n" << kUsage;
        return 2;
      }
      a.options[key] = value;
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      a.positional.push_back(s);
    }
  }
  try {
    if (a.command == "study") return cmd_study(a);
    if (a.command == "submit") return cmd_submit(a);
    if (a.command == "status") return cmd_status(a);
    if (a.command == "results") return cmd_results(a);
    if (a.command == "agents") return cmd_agents(a);
    if (a.command == "ratio") return cmd_ratio(a);
    if (a.command == "cancel") return cmd_cancel(a);
    if (a.command == "report") return cmd_report(a);
    if (a.command == "compare") return cmd_compare(a);
    if (a.command == "accept") return cmd_accept(a);
    if (a.command == "version") {
      std::cout << "scalebench " << kVersion << " (" << kGitRevision << ")\n";
      return 0;
    }
    std::cerr << (a.command.empty() ? "scalebench: no command given\n"
                                    : "scalebench: unknown command '" + a.command + "'\n")
              << kUsage;
    return 2;
  } catch (const SpecError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::string msg = e.what();
    std::cerr << "scalebench: " << msg << "\n";
    // Network trouble and coordinator refusals are 4; bad files and usage are 2.
    bool network = msg.find("http://") != std::string::npos || msg.find("https://") != std::string::npos;
    return network ? 4 : 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A folder or file of ours that cannot be made or read (--db, --logs): bad input, 2.
    std::cerr << "scalebench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "scalebench: " << e.what() << "\n";
    return 4;
  }
}
