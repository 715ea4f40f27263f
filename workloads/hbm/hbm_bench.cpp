#include "workloads/hbm/hbm_bench.hpp"

#include <string>

#include "common/units.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/memory_stream.cuh"

namespace scalebench::hbm {

namespace {
constexpr std::size_t kThreadsPerBlock = 512;

std::size_t elements(const Json& point) { return point.at("bytes").get<std::size_t>() / 16 * 4; }
}  // namespace

double bytes_moved(const Json& point) {
  return static_cast<double>(elements(point)) * sizeof(float) *
         gpu::stream_arrays(gpu::parse_stream_op(point.at("op").get<std::string>()));
}

double memory_peak_gbps(int device) {
  int khz = 0, bits = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess)
    return 0;
  return khz * 1e3 * 2 * bits / 8 * 1e-9;
}

compute::RankOutcome measure_hbm(const Json& params, const Json& point, const compute::DeviceInfo& gpu,
                                 int repetitions) {
  const gpu::StreamOp op = gpu::parse_stream_op(point.at("op").get<std::string>());
  const std::size_t n = elements(point);
  const int arrays = gpu::stream_arrays(op);
  compute::RankOutcome out;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (static_cast<double>(n) * sizeof(float) * arrays > 0.95 * free_bytes) {
    out.status = "skipped";
    out.reason = "out of memory: " + std::to_string(arrays) + " arrays of " + format_size(n * sizeof(float)) +
                 " need more than the " + format_size(free_bytes) + " free";
    return out;
  }
  // The operation's arrays only: a reads b (read, copy, triad) and c (triad), writes a.
  gpu::DeviceBuffer a(op == gpu::StreamOp::kRead ? 0 : n * sizeof(float));
  gpu::DeviceBuffer b(op == gpu::StreamOp::kWrite ? 0 : n * sizeof(float));
  gpu::DeviceBuffer c(op == gpu::StreamOp::kTriad ? n * sizeof(float) : 0);
  gpu::DeviceBuffer sum(sizeof(unsigned long long));
  auto* pa = reinterpret_cast<float*>(a.get());
  auto* pb = reinterpret_cast<float*>(b.get());
  auto* pc = reinterpret_cast<float*>(c.get());
  auto* psum = reinterpret_cast<unsigned long long*>(sum.get());
  gpu::Stream stream;
  if (pb) gpu::fill_stream_inputs(pb, pc, n, stream.get());

  const int blocks = gpu.sm_count * params.value("blocks_per_sm", 4);
  const compute::TimingConfig timing = compute::TimingConfig::from_params(params, repetitions);
  out.seconds = compute::time_on_stream(
      stream.get(), timing, [&](cudaStream_t s) { gpu::launch_stream_op(op, pa, pb, pc, n, psum, blocks, s); });

  if (params.value("check", true)) {
    CUDA_CHECK(cudaMemsetAsync(psum, 0, sizeof *psum, stream.get()));
    gpu::launch_stream_op(op, pa, pb, pc, n, psum, blocks, stream.get());
    out.wrong = static_cast<long long>(gpu::count_stream_wrong(op, pa, n, psum, stream.get()));
    out.checked = op == gpu::StreamOp::kRead ? 1 : static_cast<long long>(n);
  }
  if (const double peak = memory_peak_gbps(gpu.index); peak > 0)
    out.details["peak"] = Json{{"value", peak}, {"unit", "GB/s"}, {"basis", "memory clock x 2 x bus width"}};
  out.details["blocks"] = blocks;
  return out;
}

}  // namespace scalebench::hbm
