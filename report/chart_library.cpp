#include "report/chart_library.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/log.hpp"

namespace scalebench {

namespace {
// The library's minified JavaScript; an Error naming the file and the package when it is missing
// or is not Chart.js.
std::string read_chart_library(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path +
                ": cannot read the charting library the report page inlines (install Debian's libjs-chart.js: "
                "scripts/install-deps.sh does, or set SCALEBENCH_CHART_JS to a copy of Chart.js 3's chart.min.js)");
  std::stringstream text;
  text << in.rdbuf();
  const std::string js = text.str();
  // Inlined in a <script> element: a closing tag inside would end it early.
  if (js.find("Chart.js") == std::string::npos || js.find("</script") != std::string::npos)
    throw Error(path + ": not Chart.js's minified build (chart.min.js from libjs-chart.js)");
  return js;
}
}  // namespace

std::string chart_library_or_static() {
  const char* env = std::getenv("SCALEBENCH_CHART_JS");
  const std::string asked = env ? env : "";
  if (asked == "none") return "";
  try {
    return read_chart_library(asked.empty() ? "/usr/share/javascript/chart.js/chart.min.js" : asked);
  } catch (const Error& e) {
    if (!asked.empty()) throw;  // a copy the user named: their mistake, said as an error
    log::warn(std::string(e.what()) + "; the page's charts stay static (SVG, no hover or zoom)");
    return "";
  }
}

}  // namespace scalebench
