#pragma once
// What the report's section builders share: how records are pooled, named and tabled.
#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/json.hpp"
#include "report/build_report.hpp"
#include "report/report_model.hpp"

namespace scalebench::sections {

// Parameters that only steer how a point is measured, not what is measured: never part of a
// series' name, and never what tells two series apart. Each workload declares its own in the
// registry; the run's repetitions, round and timeout are of the same kind.
const std::set<std::string>& measurement_params();

std::string text_of(const Json& j);
// "GPUs" on GPU runs, MPI ranks on host memory: the axis a scaling study grows along.
int workers_of(const Json& r);
bool on_gpus(const Json& records);
std::string id_safe(const std::string& s);
// A chart id short enough for a file name (every file system takes 255 bytes): long ids keep
// their first 80 characters and a hash of the whole, so they stay distinct.
std::string bounded_id(const std::string& id);
bool is_ok_point(const Json& r);
// Images/s, samples/s, TFLOP/s ...: higher-is-better figures that are not a bandwidth.
bool is_throughput(const Json& r);

// The samples of several records of one point (rounds, repeated runs) pooled: median and spread.
struct Pooled {
  double median = 0, min = 0, max = 0, cv = 0;
  std::size_t n = 0;
  double pct_of_peak = -1;
  std::string link;
};
Pooled pool(const std::vector<const Json*>& recs);
std::string spread_text(const Pooled& p);
std::string cv_text(const Pooled& p);

// A name for what differs between series of one group: "variant · 4 GPUs · cuda_graph=yes".
std::string series_name(const std::string& variant, int workers, bool gpus, const std::string& extra);
// Parameters whose values differ between the records of a group (besides the group's own keys).
std::vector<std::string> varying_params(const std::vector<const Json*>& recs, const std::set<std::string>& exclude);
std::string params_text(const Json& params, const std::vector<std::string>& keys);
// What tells a figure's series apart besides its workload: the parameters that vary in the
// group, and its point without the GPU it ran on (each GPU's record of one run is one series).
// A sized point (a collective's curve) is one series over its sizes, so the size stays out.
std::string series_suffix(const Json& r, const std::vector<std::string>& extra_keys);

// A model is extrapolated beyond the measured worker counts only with a warning when it rests on
// fewer counts than this, or fits them worse (R²) than this.
constexpr int kMinPlacements = 3;
constexpr double kMinR2 = 0.9;
// Why a model fitted on `counts` measured worker counts with coefficient of determination `r2`
// is no ground for extrapolating ("2 measured GPU counts (fewer than 3), R² 0.79 (under 0.9)");
// empty when it is.
std::string extrapolation_doubt(int counts, double r2, bool gpus);
// The section's paragraph for a model drawn beyond the measurements despite `doubt`.
std::string extrapolation_warning(const std::string& what, const std::string& doubt, bool gpus);

// The variant pairs whose transports are nvlink and pcie and that ran the same workloads, as
// (nvlink variant, pcie variant): what the NVLink-against-PCIe ratios divide.
std::vector<std::pair<std::string, std::string>> nvlink_pcie_variants(const Json& exp_records);

// A latency CDF as records hold it ({"percent": [...], "ms": [...]}) as chart points: x the
// latency, y the percent of queries within it.
std::vector<ChartPoint> cdf_points(const Json& cdf);

// A chart of a latency against the Server scenario's arrival rate (log latency), empty.
Chart arrival_rate_chart(const std::string& id, const std::string& title, const std::string& y_label);
// A bound across a chart: a dashed line at `y` from x `from` to `to`, without markers.
Series bound_line(const std::string& name, double y, double from, double to);
// A series' points in order of x.
void sort_by_x(Series& s);

Table make_table(const std::string& id, const std::string& title, const std::string& note,
                 std::vector<std::pair<std::string, bool>> columns);

}  // namespace scalebench::sections
