#include "workloads/hbm/hbm_main.hpp"

#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/peak_annotator.hpp"
#include "workloads/hbm/hbm_bench.hpp"

namespace scalebench {

int run_hbm_workload(const RunRequest& run) {
  const int repetitions = run.spec.value("repetitions", 20);
  compute::ComputeWorkload w;
  w.plan = [](const Json& params) {
    return std::vector<Json>{Json{{"op", params.at("op")}, {"bytes", params.at("bytes")}}};
  };
  w.throughput = [](const Json&, const Json& point) {
    return compute::Throughput{hbm::bytes_moved(point), 1e-9, "GB/s"};
  };
  w.measure = [repetitions](const Json& params, const Json& point, const compute::DeviceInfo& gpu) {
    return hbm::measure_hbm(params, point, gpu, repetitions);
  };
  // Each GPU's memory peak moves from the rank's details to the record's `peak` and `pct_of_peak`.
  compute::PeakAnnotator peaks;
  auto finish = [&](const Json& record) {
    Json r = record;
    peaks.finish(r);
    run.emit(r);
  };
  RunRequest finished = run;  // its records through `finish` on their way to run.emit
  finished.emit = finish;
  return compute::run_compute_workload(finished, w);
}

}  // namespace scalebench
