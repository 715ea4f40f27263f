#include "workloads/compute/compute_main.hpp"

#include <cuda_runtime.h>

#include <cstdio>

#include "record/record.hpp"
#include "workloads/compute/clock_limits.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/environment.hpp"

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
}  // namespace

int run_compute_workload(const RunRequest& run, const ComputeWorkload& workload) {
  return run_compute_workload(*run.mpi, run.run_id, run.spec, run.records, run.emit, workload);
}

int run_compute_workload(const MpiSession& mpi, long long run_id, const Json& spec, bool records,
                         const std::function<void(const Json&)>& emit, const ComputeWorkload& w) {
  const bool lead = mpi.rank() == 0;
  const Json params = spec.at("params");
  const std::string workload = spec.value("workload", std::string());

  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  std::string no_gpu;
  if (rc != cudaSuccess || count == 0)
    no_gpu = std::string("no GPU visible to rank ") + std::to_string(mpi.rank()) +
             (rc != cudaSuccess ? std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(rc) + ")" : "");
  DeviceInfo gpu;
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  if (no_gpu.empty()) {
    gpu = device_info(mpi.local_rank() % count);  // one rank per GPU, by local rank
    CUDA_CHECK(cudaSetDevice(gpu.index));
    devices.push_back(describe_device(gpu.index));
    versions = gpu_versions();
    for (const auto& [k, v] : w.versions.items()) versions[k] = v;
  }
  const RunEnvironment env = capture_environment(mpi, "cuda", devices, versions);
  Json context = record_context(run_id, spec, env.placement);
  context["params"] = params;
  context["environment"] = env.environment;
  if (lead && no_gpu.empty()) context["environment"]["topology"] = to_json(placement_topology(env.placement));

  // A rank without a GPU fails the run at once, on every rank alike.
  const std::vector<std::string> problems = mpi.all_gather(no_gpu);
  for (const std::string& p : problems)
    if (!p.empty()) {
      if (lead) {
        if (records)
          emit(status_record(context, "failed", p));
        else
          std::fprintf(stdout, "# failed: %s\n", p.c_str());
      }
      return 3;
    }

  if (lead && !records)
    std::fprintf(stdout, "# %s on %d GPU%s (%s), one rank per GPU, all at once\n", workload.c_str(), mpi.size(),
                 mpi.size() == 1 ? "" : "s", gpu.name.c_str());
  ClockLimitWatch clock_limits(devices.empty() ? std::string() : device_uuid(gpu.index));
  int exit_code = 0;
  for (const Json& point : w.plan(params)) {
    clock_limits.start();  // before the barrier: its NVML calls do not stagger the GPUs' start
    mpi.barrier();         // every GPU starts the point together: throttling under full load shows
    RankOutcome mine = measure_safely(w, params, point, gpu);
    if (Json limits = clock_limits.stop(); !limits.empty()) mine.details["clock_limits"] = std::move(limits);
    const std::vector<std::string> all = mpi.all_gather(mine.to_json().dump());
    if (!lead) continue;
    std::vector<RankOutcome> ranks;
    for (const std::string& s : all) ranks.push_back(RankOutcome::from_json(Json::parse(s)));
    const Throughput tp = w.throughput(params, point);
    if (records) {
      for (const Json& r : point_records(context, point, tp, ranks)) {
        if (r.value("status", "") == "failed") exit_code = 3;
        emit(r);
      }
    } else {
      for (const RankOutcome& o : ranks)
        if (o.status == "failed" || o.wrong > 0) exit_code = 3;
      std::fprintf(stdout, "%s\n", table_row(point, tp, ranks).c_str());
      std::fflush(stdout);
    }
  }
  return exit_code;
}

}  // namespace scalebench::compute
