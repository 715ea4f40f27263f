#include "workloads/checksum/checksum_main.hpp"

#include <cstdint>
#include <string>

#include "record/point_record.hpp"
#include "workloads/checksum/checksum_bench.hpp"
#include "workloads/compute/compute_main.hpp"

namespace scalebench {

namespace {
// Each GPU's hash as a record of its own, read by acceptance's comparison across GPUs. `value`
// holds the hash's top 52 bits (exact in a double), details.checksum all 64 as hex.
Json checksum_record(const Json& throughput_record) {
  Json r = throughput_record;
  const std::string hash = r["details"].value("checksum", "");
  const double top = static_cast<double>(std::stoull(hash, nullptr, 16) >> 12);
  r["metric"] = "checksum";
  r["unit"] = "hash";
  r["better"] = "";
  r["value"] = top;
  r["stats"] = stats_json({top}, "repetitions");
  return r;
}
}  // namespace

int run_checksum_workload(const RunRequest& run) {
  compute::ComputeWorkload w;
  w.plan = [](const Json& params) {
    if (params.at("kind") == "train")
      return std::vector<Json>{Json{{"kind", "train"}, {"n", params.at("n")}, {"steps", params.at("steps")}}};
    return std::vector<Json>{
        Json{{"kind", params.at("kind")}, {"m", params.at("n")}, {"n", params.at("n")}, {"k", params.at("n")}}};
  };
  w.throughput = [](const Json& params, const Json&) {
    return compute::Throughput{checksum::checksum_flops(params), 1e-12, "TFLOP/s"};
  };
  w.measure = [](const Json& params, const Json&, const compute::DeviceInfo&) {
    return checksum::compute_checksum(params);
  };
  auto finish = [&](const Json& record) {
    run.emit(record);
    if (record.value("metric", "") == "throughput" && record.contains("details") &&
        record["details"].contains("checksum"))
      run.emit(checksum_record(record));
  };
  RunRequest finished = run;  // its records through `finish` on their way to run.emit
  finished.emit = finish;
  return compute::run_compute_workload(finished, w);
}

}  // namespace scalebench
