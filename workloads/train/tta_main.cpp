// The train workload's time-to-accuracy mode (a `data` parameter): loads the data, trains every
// seed to the target, and reports each seed and the summary (records, or lines and the MLLOG).
#include <cuda_runtime.h>

#include <cstdio>
#include <optional>

#include "common/error.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/workload_run.hpp"
#include "workloads/train/train_config.hpp"
#include "workloads/train/train_main.hpp"
#include "workloads/train/tta_bench.hpp"

namespace scalebench {

namespace {
// The data on every rank, or the first rank's problem on every rank alike (a missing or corrupt
// file names itself).
std::optional<dataset::Splits> load(const MpiSession& mpi, const train::TtaConfig& cfg, std::string& problem) {
  std::optional<dataset::Splits> data;
  std::string mine;
  try {
    data = dataset::read_mnist_folder(dataset::data_folder(cfg.data));
  } catch (const Error& e) {
    mine = e.what();
  }
  problem = mpi.first_problem(mine);
  return data;
}
}  // namespace

int run_tta_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const Json params = run.spec.at("params");
  const train::TtaConfig cfg = train::TtaConfig::from_params(params);
  const train::Config tc = train::Config::from_params(params);
  train::TtaRecipe recipe;
  recipe.precision = tc.precisions.front();
  recipe.batch = cfg.batch_per_gpu(tc.batches.front(), mpi.size());
  recipe.momentum = tc.momentum;
  recipe.weight_decay = tc.weight_decay;
  recipe.search = tc.search;

  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    count = 0;
  }
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  std::string mine = count == 0 ? "no GPU visible to rank " + std::to_string(mpi.rank()) : "";
  if (count > 0) {
    const int d = mpi.local_rank() % count;
    CUDA_CHECK(cudaSetDevice(d));
    devices.push_back(describe_device(d));
    versions = gpu_versions();
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    mine = compute::unsupported_on(recipe.precision, p.major, p.minor);
  }
  WorkloadRun shell(run, params, "cuda", devices, versions);
  // The data first: a missing or corrupt file is named even where no GPU is.
  std::string problem;
  std::optional<dataset::Splits> data = load(mpi, cfg, problem);
  if (problem.empty()) problem = mpi.first_problem(mine);
  if (!problem.empty()) {
    shell.fail(problem);
    return shell.exit_code();
  }
  train::TtaBench bench(mpi, cfg, recipe, *data);
  data.reset();  // on the GPU now
  const train::TtaShape shape{
      mpi.size(), bench.global_batch(), bench.peak_lr(), compute::name(recipe.precision), "fmnist-resnet", cfg.data};
  if (shell.lead() && !shell.records())
    std::fprintf(stdout, "# train time to accuracy: %s on %d GPU%s, global batch %d, peak lr %.4g, target %.4f\n",
                 cfg.data.c_str(), mpi.size(), mpi.size() == 1 ? "" : "s", shape.global_batch, shape.peak_lr,
                 cfg.target_accuracy);
  std::vector<train::SeedResult> results;
  for (std::uint64_t seed : cfg.seeds) {
    results.push_back(bench.run_seed(seed));
    if (shell.lead() && !shell.records()) {
      for (const std::string& l : results.back().mllog) std::fprintf(stdout, "%s\n", l.c_str());
      std::fprintf(stdout, "%s\n", train::tta_seed_line(results.back()).c_str());
      for (const train::QuantizedAccuracy& q : results.back().quantized)
        std::fprintf(stdout, "%s\n", train::tta_quantized_line(results.back(), q, cfg).c_str());
      std::fflush(stdout);
    }
  }
  if (!shell.lead()) return shell.exit_code();
  if (shell.records()) {
    for (const Json& r : train::tta_records(shell.context(), cfg, shape, results)) {
      // The summary's verdict, and any quantized net's beyond its tolerance; a seed's miss alone does
      // not fail the run (MLPerf's rule lets some seeds miss).
      if (r.value("status", "") == "failed" && (r["point"]["seed"] == "all" || r["metric"] == "quantized_accuracy"))
        shell.note_failed();
      shell.emit(r);
    }
  } else {
    std::fprintf(stdout, "%s\n", train::tta_summary_line(results, cfg, mpi.size()).c_str());
  }
  return shell.exit_code();
}

}  // namespace scalebench
