#include "workloads/rnn/rnn_main.hpp"

#include "workloads/compute/compute_main.hpp"
#include "workloads/rnn/rnn_bench.hpp"
#include "workloads/rnn/rnn_config.hpp"

namespace scalebench {

int run_rnn_workload(const RunRequest& run) {
  const rnn::Config cfg = rnn::Config::from_params(run.spec.at("params"));
  const compute::TimingConfig timing = compute::TimingConfig::from_spec(run.spec);
  compute::ComputeWorkload w;
  w.plan = [cfg](const Json&) { return rnn::plan(cfg); };
  w.throughput = [cfg](const Json&, const Json&) { return rnn::throughput(cfg); };
  w.measure = [cfg, timing](const Json&, const Json& point, const compute::DeviceInfo& gpu) {
    return rnn::measure_point(cfg, point.at("hidden").get<int>(), timing, gpu);
  };
  return compute::run_compute_workload(run, w);
}

}  // namespace scalebench
