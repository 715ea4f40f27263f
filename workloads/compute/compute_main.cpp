#include "workloads/compute/compute_main.hpp"

#include <cuda_runtime.h>

#include <cstdio>

#include "workloads/compute/clock_limits.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench::compute {

namespace {
DeviceInfo device_info(int d) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, d));
  DeviceInfo g;
  g.index = d;
  g.name = p.name;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.sm_count = p.multiProcessorCount;
  int khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d));
  g.max_clock_mhz = khz / 1000;
  g.memory_bytes = p.totalGlobalMem;
  return g;
}

RankOutcome measure_safely(const ComputeWorkload& w, const Json& params, const Json& point, const DeviceInfo& gpu) {
  try {
    return w.measure(params, point, gpu);
  } catch (const std::exception& e) {
    RankOutcome o;
    o.status = "failed";
    o.reason = e.what();
    return o;
  }
}

// This rank's GPU (one rank per GPU, by local rank), made current, and what the records say of
// it; or why there is none.
struct RankGpu {
  DeviceInfo gpu;
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  std::string missing;  // "" when the rank has its GPU
};

RankGpu take_gpu(const MpiSession& mpi, const ComputeWorkload& w) {
  RankGpu r;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    r.missing = std::string("no GPU visible to rank ") + std::to_string(mpi.rank()) +
                (rc != cudaSuccess ? std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(rc) + ")" : "");
    return r;
  }
  r.gpu = device_info(mpi.local_rank() % count);
  CUDA_CHECK(cudaSetDevice(r.gpu.index));
  r.devices.push_back(describe_device(r.gpu.index));
  r.versions = gpu_versions();
  for (const auto& [k, v] : w.versions.items()) r.versions[k] = v;
  return r;
}

// Every point of the plan on every GPU at once, gathered to the lead: its records (a failed one
// fails the run) or a table row each.
void measure_points(WorkloadRun& shell, const MpiSession& mpi, const ComputeWorkload& w, const Json& params,
                    const RankGpu& mine) {
  ClockLimitWatch clock_limits(mine.devices.empty() ? std::string() : device_uuid(mine.gpu.index));
  for (const Json& point : w.plan(params)) {
    clock_limits.start();  // before the barrier: its NVML calls do not stagger the GPUs' start
    mpi.barrier();         // every GPU starts the point together: throttling under full load shows
    RankOutcome outcome = measure_safely(w, params, point, mine.gpu);
    if (Json limits = clock_limits.stop(); !limits.empty()) outcome.details["clock_limits"] = std::move(limits);
    const std::vector<std::string> all = mpi.all_gather(outcome.to_json().dump());
    if (!shell.lead()) continue;
    std::vector<RankOutcome> ranks;
    for (const std::string& s : all) ranks.push_back(RankOutcome::from_json(Json::parse(s)));
    const Throughput tp = w.throughput(params, point);
    if (shell.records()) {
      for (const Json& r : point_records(shell.context(), point, tp, ranks)) {
        if (r.value("status", "") == "failed") shell.note_failed();
        shell.emit(r);
      }
    } else {
      for (const RankOutcome& o : ranks)
        if (o.status == "failed" || o.wrong > 0) shell.note_failed();
      std::fprintf(stdout, "%s\n", table_row(point, tp, ranks).c_str());
      std::fflush(stdout);
    }
  }
}
}  // namespace

int run_compute_workload(const RunRequest& run, const ComputeWorkload& w) {
  const MpiSession& mpi = *run.mpi;
  const Json params = run.spec.at("params");
  const RankGpu mine = take_gpu(mpi, w);
  WorkloadRun shell(run, params, "cuda", mine.devices, mine.versions);
  if (shell.lead() && mine.missing.empty())
    shell.context()["environment"]["topology"] = to_json(placement_topology(shell.environment().placement));

  // A rank without a GPU fails the run at once, on every rank alike.
  for (const std::string& p : mpi.all_gather(mine.missing))
    if (!p.empty()) {
      shell.fail(p);
      return shell.exit_code();
    }

  if (shell.lead() && !shell.records())
    std::fprintf(stdout, "# %s on %d GPU%s (%s), one rank per GPU, all at once\n",
                 run.spec.value("workload", std::string()).c_str(), mpi.size(), mpi.size() == 1 ? "" : "s",
                 mine.gpu.name.c_str());
  measure_points(shell, mpi, w, params, mine);
  return shell.exit_code();
}

}  // namespace scalebench::compute
