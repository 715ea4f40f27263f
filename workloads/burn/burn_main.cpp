#include "workloads/burn/burn_main.hpp"

#include "analysis/point_record.hpp"
#include "workloads/burn/burn_bench.hpp"
#include "workloads/compute/compute_main.hpp"

namespace scalebench {

namespace {
// Each GPU's decay as a record of its own, beside its throughput: what an acceptance rule reads.
Json decay_record(const Json& throughput_record) {
  Json r = throughput_record;
  const double decay = r["details"].value("decay", 1.0);
  r["metric"] = "decay";
  r["unit"] = "ratio";
  r["better"] = "higher";
  r["value"] = decay;
  r["stats"] = stats_json({decay}, "intervals");
  r["details"].erase("series");
  return r;
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
    if (record.value("metric", "") == "throughput" && record.contains("details") && record["details"].contains("decay"))
      run.emit(decay_record(record));
  };
  return compute::run_compute_workload(*run.mpi, run.run_id, run.spec, run.records, finish, w);
}

}  // namespace scalebench
