#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "report/report_model.hpp"

namespace scalebench {

// Records drawn over the report's own, dashed, in the charts where they share a group: other
// experiments (`report --overlay`) or a saved baseline (`report --baseline`).
struct Overlay {
  std::string label;  // what their series' names start with: the experiment's name, or "baseline"
  Json records;       // a JSON array, as `scalebench results --format json` gives them
};

struct ReportOptions {
  std::string title = "scalebench report";
  std::vector<int> extrapolate_to = {16, 64, 256, 1024};  // GPU (or rank) counts the scaling models predict
  std::vector<Overlay> overlays;
  // Predictions with their scores, as GET /api/v1/predictions lists them: those scored by the
  // report's experiments get the section "Predicted against measured".
  Json predictions = Json::array();
};

// Turns stored records (a JSON array, as `scalebench results --format json` gives them) into the
// report: the machine header, a section per experiment with its collective curves, NVLink/PCIe
// ratios, throughput scaling (speedup and efficiency), fitted scaling models, every other figure,
// and the runs that did not end ok; then predictions against what was measured. Deterministic:
// the same records give the same report.
Report build_report(const Json& records, const ReportOptions& options = {});

// Numbers as the report prints them: 3 significant digits up to 1000, no exponent below 1e-3.
std::string format_number(double v);

}  // namespace scalebench
