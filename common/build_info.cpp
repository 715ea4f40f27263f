#include "common/build_info.hpp"

#include "common/version.hpp"

namespace scalebench {

namespace {
// A label value as the text format wants it: backslash, quote and newline escaped.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += {'\\', c};
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string build_info_metrics_text(const std::string& program) {
  return "# HELP scalebench_build_info 1, labelled with the program, its version and the git revision it was built "
         "from\n"
         "# TYPE scalebench_build_info gauge\n"
         "scalebench_build_info{program=\"" +
         escaped(program) + "\",version=\"" + escaped(kVersion) + "\",revision=\"" + escaped(kGitRevision) + "\"} 1\n";
}

}  // namespace scalebench
