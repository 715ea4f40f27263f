#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

// GPUs their power or thermal limit held down while they measured: the share of each run's
// measuring time (details.clock_limits of its per-GPU time records, summed over the points) that
// NVML counted the clocks below the application clocks. Runs under 1% are left out.
void add_clock_limits(Section& sec, const std::vector<const Json*>& recs) {
  struct Sum {
    double window = 0, power = 0, thermal = 0;
    bool has_power = false, has_thermal = false;
    const Json* first = nullptr;
  };
  // (run id as a number, so that run 10 follows run 9; its text; GPU) -> sums
  std::map<std::tuple<long long, std::string, long long>, Sum> by_gpu;
  for (const Json* r : recs) {
    const RecordView v(*r);
    if (v.metric != "time") continue;
    const std::optional<double> window = v.number_at("details.clock_limits.window_ms");
    if (!window) continue;
    const long long gpu = std::max(v.gpu(), 0);  // point.gpu "all", or none: the run as a whole
    Sum& s = by_gpu[{v.run_id.value_or(std::numeric_limits<long long>::max()),
                     v.run_id ? std::to_string(*v.run_id) : "", gpu}];
    if (!s.first) s.first = r;
    s.window += *window;
    if (const auto power = v.number_at("details.clock_limits.power_capped_ms")) s.power += *power, s.has_power = true;
    if (const auto thermal = v.number_at("details.clock_limits.thermal_capped_ms"))
      s.thermal += *thermal, s.has_thermal = true;
  }
  Table t = make_table(
      sec.id + "-clock-limits", "GPUs held down by their power or thermal limit",
      "share of each run's measuring time (set-up, warm-up and timed samples, summed over its "
      "points) that NVML counted the GPU's clocks below the application clocks; a figure taken "
      "there is limited by the GPU's power or cooling, not by the software; a GPU under 1% in a run is left out",
      {{"run", true},
       {"workload", false},
       {"variant", false},
       {"workers", true},
       {"GPU", true},
       {"host", false},
       {"measured s", true},
       {"power-capped %", true},
       {"thermal-capped %", true}});
  for (const auto& [key, s] : by_gpu) {
    const auto& [id_number, id, gpu] = key;
    if (s.window <= 0) continue;
    const double power = 100 * s.power / s.window, thermal = 100 * s.thermal / s.window;
    if (power < 1 && thermal < 1) continue;
    const RecordView r(*s.first);
    std::string host;
    for (const RecordDevice& dev : r.placement.devices)
      if (dev.rank.value_or(-1) == gpu) host = dev.host;
    t.rows.push_back({id, r.workload, r.variant, std::to_string(workers_of(*s.first)), std::to_string(gpu), host,
                      format_number(s.window / 1e3), s.has_power ? format_number(power) : "",
                      s.has_thermal ? format_number(thermal) : ""});
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

}  // namespace scalebench::sections
