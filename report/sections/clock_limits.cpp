#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>

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
    if (r->value("metric", "") != "time") continue;
    const Json* d = r->contains("details") ? &(*r)["details"] : nullptr;
    if (!d || !d->is_object() || !d->contains("clock_limits") || !(*d)["clock_limits"].is_object()) continue;
    const Json& c = (*d)["clock_limits"];
    if (!c.contains("window_ms") || !c["window_ms"].is_number()) continue;
    const Json pt = r->value("point", Json::object());
    const long long gpu =
        pt.is_object() && pt.contains("gpu") && pt["gpu"].is_number_integer() ? pt["gpu"].get<long long>() : 0;
    const Json id = r->value("run_id", Json());
    Sum& s =
        by_gpu[{id.is_number_integer() ? id.get<long long>() : std::numeric_limits<long long>::max(), id.dump(), gpu}];
    if (!s.first) s.first = r;
    s.window += c["window_ms"].get<double>();
    if (c.contains("power_capped_ms") && c["power_capped_ms"].is_number())
      s.power += c["power_capped_ms"].get<double>(), s.has_power = true;
    if (c.contains("thermal_capped_ms") && c["thermal_capped_ms"].is_number())
      s.thermal += c["thermal_capped_ms"].get<double>(), s.has_thermal = true;
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
    const Json& r = *s.first;
    std::string host;
    const Json pl = r.value("placement", Json::object());
    if (pl.contains("devices") && pl["devices"].is_array())
      for (const Json& dev : pl["devices"])
        if (dev.is_object() && dev.value("rank", -1LL) == gpu) host = dev.value("host", "");
    t.rows.push_back({id, r.value("workload", ""), r.value("variant", ""), std::to_string(workers_of(r)),
                      std::to_string(gpu), host, format_number(s.window / 1e3), s.has_power ? format_number(power) : "",
                      s.has_thermal ? format_number(thermal) : ""});
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

}  // namespace scalebench::sections
