#pragma once
#include <string>

namespace scalebench {

// What the report page inlines for its interactive charts: Chart.js as Debian packages it
// (libjs-chart.js, /usr/share/javascript/chart.js/chart.min.js), read when the report is written so
// that the page works offline and as one file; $SCALEBENCH_CHART_JS names another copy (a machine
// without the package). "" for a page whose charts stay the static SVGs, with a warning, when the
// package is not installed (SCALEBENCH_CHART_JS=none asks for that page; a copy named there that
// cannot be read, or is not Chart.js, is an Error naming the file).
std::string chart_library_or_static();

}  // namespace scalebench
