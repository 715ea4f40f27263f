#pragma once
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace scalebench {

// Parsed command line of `scalebench`: the command, its positional arguments and --options.
struct CliArgs {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  std::string opt(const std::string& key, const std::string& fallback = "") const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
  // A numeric option: nullopt when not given; NaN when its text is not wholly a finite number.
  std::optional<double> opt_number(const std::string& key) const {
    const std::string s = opt(key);
    if (s.empty()) return std::nullopt;
    std::size_t used = 0;
    double v = std::nan("");
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    return used == s.size() && std::isfinite(v) ? v : std::nan("");
  }
  // A comma-separated option ("a,b,,c" -> a, b, c); empty when not given.
  std::vector<std::string> opt_list(const std::string& key) const {
    std::vector<std::string> out;
    const std::string s = opt(key);
    for (std::size_t start = 0; start < s.size();) {
      auto end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
};

// Each returns the process exit code: 0 fine, 1 a reference failed, 2 bad usage or input,
// 3 runs failed or timed out, 4 the coordinator could not be reached or failed.
int cmd_study(const CliArgs& a);
int cmd_submit(const CliArgs& a);
int cmd_status(const CliArgs& a);
int cmd_wait(const CliArgs& a);  // as study: 0 all ok, 1 a reference failed, 3 runs failed or --timeout
int cmd_results(const CliArgs& a);
int cmd_agents(const CliArgs& a);
int cmd_cancel(const CliArgs& a);
int cmd_ratio(const CliArgs& a);
int cmd_report(const CliArgs& a);
int cmd_compare(const CliArgs& a);  // 1: a regression was flagged; 3: no point in common
int cmd_accept(const CliArgs& a);   // 0: every node passed (warnings allowed); 1: a check failed
int cmd_predict(const CliArgs& a);
int cmd_predictions(const CliArgs& a);
const char* accept_help();

}  // namespace scalebench
