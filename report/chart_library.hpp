#pragma once
#include <string>

namespace scalebench {

// The charting library the report page inlines for its interactive charts: Chart.js as Debian
// packages it (libjs-chart.js), read when the report is written so that the page works offline
// and as one file. $SCALEBENCH_CHART_JS names another copy (a machine without the package).
std::string chart_library_path();

// The library's minified JavaScript; an Error naming the file and the package when it is missing
// or is not Chart.js.
std::string read_chart_library();

// What the page inlines: the library, or "" for a page whose charts stay the static SVGs, with a
// warning, when the package is not installed (SCALEBENCH_CHART_JS=none asks for that page; a copy
// named there that cannot be read is an Error).
std::string chart_library_or_static();

}  // namespace scalebench
