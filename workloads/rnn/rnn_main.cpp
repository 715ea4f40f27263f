#include "workloads/rnn/rnn_main.hpp"

#include "workloads/compute/compute_main.hpp"
#include "workloads/rnn/rnn_bench.hpp"
#include "workloads/rnn/rnn_config.hpp"

namespace scalebench {

int run_rnn_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const long long run_id = run.run_id;
  const Json& spec = run.spec;
  const bool records = run.records;
  const auto& emit = run.emit;
  const rnn::Config cfg = rnn::Config::from_params(spec.at("params"));
  const compute::TimingConfig timing =
      compute::TimingConfig::from_params(spec.at("params"), spec.value("repetitions", 20));
  compute::ComputeWorkload w;
  w.plan = [cfg](const Json&) { return rnn::plan(cfg); };
  w.throughput = [cfg](const Json&, const Json&) { return rnn::throughput(cfg); };
  w.measure = [cfg, timing](const Json&, const Json& point, const compute::DeviceInfo& gpu) {
    return rnn::measure_point(cfg, point.at("hidden").get<int>(), timing, gpu);
  };
  return compute::run_compute_workload(mpi, run_id, spec, records, emit, w);
}

}  // namespace scalebench
