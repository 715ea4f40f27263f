#include "workloads/burn/burn_main.hpp"

#include "record/point_record.hpp"
#include "workloads/burn/burn_bench.hpp"
#include "workloads/burn/burn_decay.hpp"
#include "workloads/compute/compute_main.hpp"

namespace scalebench {

namespace {
// A figure of each GPU's burn as a record of its own, beside its throughput: what an acceptance
// rule reads. Its details are the throughput record's, without the series.
Json derived_record(const Json& throughput_record, const char* metric, const char* unit, double value) {
  Json r = throughput_record;
  r["metric"] = metric;
  r["unit"] = unit;
  r["better"] = "higher";
  r["value"] = value;
  r["stats"] = stats_json({value}, "intervals");
  r["details"].erase("series");
  return r;
}

// The SM clock each interval read (NVML), in order; empty without NVML.
std::vector<double> interval_clocks(const Json& details) {
  std::vector<double> clocks;
  for (const Json& s : details.value("series", Json::array()))
    if (s.contains("sm_clock_mhz") && s["sm_clock_mhz"].is_number()) clocks.push_back(s["sm_clock_mhz"].get<double>());
  return clocks;
}

// sm_clock (where the clock settled, MHz) and clock_hold (that over where it started): a GPU
// whose clock falls while its peers' do not, or that runs far below its maximum clock.
std::vector<Json> clock_records(const Json& throughput_record) {
  const burn::ClockHold hold = burn::clock_hold(interval_clocks(throughput_record["details"]));
  if (hold.sustained_mhz <= 0) return {};
  Json clock = derived_record(throughput_record, "sm_clock", "MHz", hold.sustained_mhz);
  clock["details"]["start_sm_clock_mhz"] = hold.start_mhz;
  Json ratio = derived_record(throughput_record, "clock_hold", "ratio", hold.ratio());
  ratio["details"]["start_sm_clock_mhz"] = hold.start_mhz;
  ratio["details"]["sustained_sm_clock_mhz"] = hold.sustained_mhz;
  return {clock, ratio};
}
}  // namespace

int run_burn_workload(const RunRequest& run) {
  compute::ComputeWorkload w;
  w.plan = [](const Json& params) {
    return std::vector<Json>{Json{{"target", params.at("target")}, {"duration_s", params.at("duration_s")}}};
  };
  w.throughput = [](const Json& params, const Json&) { return burn::throughput(params); };
  w.measure = [](const Json& params, const Json&, const compute::DeviceInfo& gpu) {
    return burn::measure_burn(params, gpu);
  };
  auto finish = [&](const Json& record) {
    run.emit(record);
    if (record.value("metric", "") != "throughput" || !record.contains("details") ||
        !record["details"].contains("decay"))
      return;
    run.emit(derived_record(record, "decay", "ratio", record["details"]["decay"].get<double>()));
    for (const Json& r : clock_records(record)) run.emit(r);
  };
  RunRequest finished = run;  // its records through `finish` on their way to run.emit
  finished.emit = finish;
  return compute::run_compute_workload(finished, w);
}

}  // namespace scalebench
