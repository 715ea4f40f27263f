#include "workloads/conv/conv_main.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/conv/conv.hpp"
#include "workloads/conv/conv_bench.hpp"
#include "workloads/conv/conv_report.hpp"

namespace scalebench {

int run_conv_workload(const RunRequest& run) {
  const conv::Config cfg = conv::Config::from_params(run.spec.at("params"));
  const compute::TimingConfig timing = compute::TimingConfig::from_spec(run.spec);

  std::optional<conv::ConvBench> bench;  // made on first use, once the rank's GPU is current
  compute::ComputeWorkload w;
  w.plan = [&](const Json&) { return compute::points_json(conv::plan(cfg)); };
  w.throughput = [](const Json&, const Json& point) { return conv::throughput(conv::ConvPoint::from_json(point)); };
  w.measure = [&](const Json&, const Json& point, const compute::DeviceInfo& gpu) {
    if (!bench) bench.emplace();
    return bench->measure(conv::ConvPoint::from_json(point), cfg, timing, gpu);
  };
  w.versions = Json{{"cudnn_headers", std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                                          std::to_string(CUDNN_PATCHLEVEL)}};

  // Records either go out with their peak, or become the table's lines (the driver reports
  // records in both cases, so the table can show the algorithm and workspace of each point).
  conv::PeakAnnotator peaks;
  bool header = false;
  auto out = [&](const Json& record) {
    Json r = record;
    peaks.annotate(r);
    if (run.records) return run.emit(r);
    if (!header && r.contains("point")) {
      const Json devices = r.value("placement", Json::object()).value("devices", Json::array());
      std::printf("# conv on %zu GPU%s (%s), one rank per GPU, all at once; algo=%s\n%s\n", devices.size(),
                  devices.size() == 1 ? "" : "s",
                  devices.empty() ? "?" : devices[0].value("gpu", std::string("?")).c_str(),
                  cfg.search ? "search" : "heuristic", conv::table_header().c_str());
      header = true;
    }
    const std::string line = conv::table_line(r);
    if (!line.empty()) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  RunRequest to_table = run;  // records in either format: the table's lines are made from them
  to_table.records = true;
  to_table.emit = out;
  return compute::run_compute_workload(to_table, w);
}

}  // namespace scalebench
