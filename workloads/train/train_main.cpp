#include "workloads/train/train_main.hpp"

#include <cudnn.h>

#include <optional>
#include <string>

#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/train/train_bench.hpp"
#include "workloads/train/train_config.hpp"
#include "workloads/train/tta_config.hpp"

namespace scalebench {

int run_train_workload(const RunRequest& request) {
  RunRequest run = request;  // its records carry the resolved parameters
  run.spec["params"] = train::resolved_params(request.spec.at("params"));
  const Json& params = run.spec.at("params");
  if (train::wants_tta(params)) return run_tta_workload(run);
  const train::Config cfg = train::Config::from_params(params);
  compute::TimingConfig timing = compute::TimingConfig::from_spec(run.spec);
  timing.iters = params.value("steps", 5);  // steps per timed sample

  std::optional<train::TrainBench> bench;  // made on first use, once the rank's GPU is current
  compute::ComputeWorkload w;
  w.plan = [&](const Json&) { return compute::points_json(train::plan(cfg)); };
  w.throughput = [](const Json&, const Json& point) { return train::throughput(train::TrainPoint::from_json(point)); };
  w.measure = [&](const Json&, const Json& point, const compute::DeviceInfo& gpu) {
    if (!bench)
      bench.emplace(*run.mpi, cfg.comm, run.spec.value("env", Json::object()),
                    run.spec.value("transport", std::string()));
    return bench->measure(train::TrainPoint::from_json(point), cfg, timing, gpu);
  };
  w.versions = Json{{"cudnn_headers", std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                                          std::to_string(CUDNN_PATCHLEVEL)},
                    {"cudnn_library", std::to_string(cudnnGetVersion())}};
  return compute::run_compute_workload(run, w);
}

}  // namespace scalebench
