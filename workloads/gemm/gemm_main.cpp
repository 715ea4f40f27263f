#include "workloads/gemm/gemm_main.hpp"

#include <cstdio>

#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/peak_annotator.hpp"
#include "workloads/gemm/gemm_bench.hpp"
#include "workloads/gemm/gemm_config.hpp"
#include "workloads/gemm/gemm_report.hpp"
#include "workloads/gpu/cublaslt_version.hpp"

namespace scalebench {

int run_gemm_workload(const RunRequest& run) {
  const int repetitions = run.spec.value("repetitions", 20);
  const gemm::Config cfg = gemm::Config::from_params(run.spec.at("params"));  // bad parameters fail before any GPU work
  compute::ComputeWorkload w;
  w.plan = [](const Json& params) {
    const gemm::Config c = gemm::Config::from_params(params);
    std::vector<Json> points;
    for (const gemm::Shape& s : c.shapes) points.push_back(gemm::point_json(c.precision, s));
    return points;
  };
  w.throughput = [](const Json& params, const Json& point) {
    return gemm::throughput(compute::parse_precision(params.value("precision", std::string("bf16"))),
                            gemm::shape_from_json(point));
  };
  w.measure = [repetitions](const Json& params, const Json& point, const compute::DeviceInfo& gpu) {
    return gemm::measure_gemm(params, point, gpu, repetitions);
  };
  w.versions = Json{{"cublaslt", gpu::cublaslt_version()}};

  // The compute layer writes records; the table is made from them, so that it shows what they say.
  compute::PeakAnnotator peaks;
  gemm::TableFormatter table;
  bool header = false;
  auto finish = [&](const Json& record) {
    Json r = record;
    peaks.finish(r);
    if (run.records) return run.emit(r);
    if (!header) {
      std::printf("# gemm %s, %zu shape%s, on %d GPU%s at once (one rank per GPU)\n%s\n", compute::name(cfg.precision),
                  cfg.shapes.size(), cfg.shapes.size() == 1 ? "" : "s", run.mpi->size(),
                  run.mpi->size() == 1 ? "" : "s", gemm::table_header().c_str());
      header = true;
    }
    const std::string line = table.format_row(r);
    if (!line.empty()) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  RunRequest to_table = run;  // records in either format: the table's rows are made from them
  to_table.records = true;
  to_table.emit = finish;
  return compute::run_compute_workload(to_table, w);
}

}  // namespace scalebench
