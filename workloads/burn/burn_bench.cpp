#include "workloads/burn/burn_bench.hpp"

#include "workloads/burn/burn_decay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "topology/nvml.hpp"
#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/memory_stream.cuh"
#include "workloads/gpu/square_gemm.hpp"
#include "workloads/runtime/device_description.hpp"

namespace scalebench::burn {

namespace {
constexpr int kWarmupOps = 3;

std::size_t triad_elements(const Json& params) { return params.at("bytes").get<std::size_t>() / 16 * 4; }

// The load one operation at a time, and a check that it still computes what it computed first.
class Load {
 public:
  virtual ~Load() = default;
  virtual void run(cudaStream_t s) = 0;
  // A value that must not change between runs (the GEMM's hash), or wrong elements (triad).
  virtual std::uint64_t fingerprint(cudaStream_t s) = 0;
  virtual bool fingerprint_is_count() const = 0;
  virtual Json details() const { return Json::object(); }
};

class GemmLoad : public Load {
 public:
  GemmLoad(const Json& params, cudaStream_t s) : gemm_(params.at("n").get<int>()) {
    gemm_.fill_inputs(params.at("seed").get<std::uint64_t>(), s);
  }
  void run(cudaStream_t s) override { gemm_.run(s); }
  std::uint64_t fingerprint(cudaStream_t s) override { return gpu::hash_bf16(gemm_.output(), gemm_.elements(), s); }
  bool fingerprint_is_count() const override { return false; }
  Json details() const override { return Json{{"algorithm", gemm_.algorithm()}}; }

 private:
  gpu::SquareGemm gemm_;
};

class TriadLoad : public Load {
 public:
  TriadLoad(const Json& params, int sms, cudaStream_t s)
      : n_(triad_elements(params)), a_(n_ * 4), b_(n_ * 4), c_(n_ * 4), blocks_(sms * 4) {
    gpu::fill_stream_inputs(f(b_), f(c_), n_, s);
  }
  void run(cudaStream_t s) override {
    gpu::launch_stream_op(gpu::StreamOp::kTriad, f(a_), f(b_), f(c_), n_, nullptr, blocks_, s);
  }
  std::uint64_t fingerprint(cudaStream_t s) override {
    return gpu::count_stream_wrong(gpu::StreamOp::kTriad, f(a_), n_, nullptr, s);
  }
  bool fingerprint_is_count() const override { return true; }

 private:
  static float* f(const gpu::DeviceBuffer& b) { return reinterpret_cast<float*>(b.get()); }
  std::size_t n_;
  gpu::DeviceBuffer a_, b_, c_;
  int blocks_;
};

// This GPU's clock and power, when NVML is there.
class Telemetry {
 public:
  explicit Telemetry(int device) : nvml_(NvmlLibrary::open()), uuid_(device_uuid(device)) {}
  std::optional<NvmlClockPower> read() const {
    if (!nvml_.available()) return std::nullopt;
    try {
      return nvml_.read_clock_power(uuid_);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

 private:
  NvmlLibrary nvml_;
  std::string uuid_;
};

double seconds_between(const gpu::Event& a, const gpu::Event& b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms * 1e-3;
}
}  // namespace

compute::Throughput throughput(const Json& params) {
  if (params.at("target") == "gemm") {
    const double n = params.at("n").get<double>();
    return {2 * n * n * n, 1e-12, "TFLOP/s"};
  }
  return {3.0 * triad_elements(params) * sizeof(float), 1e-9, "GB/s"};
}

compute::RankOutcome measure_burn(const Json& params, const compute::DeviceInfo& gpu) {
  gpu::Stream stream;
  std::unique_ptr<Load> load;
  if (params.at("target") == "gemm")
    load = std::make_unique<GemmLoad>(params, stream.get());
  else
    load = std::make_unique<TriadLoad>(params, gpu.sm_count, stream.get());
  const Telemetry telemetry(gpu.index);
  const compute::Throughput tp = throughput(params);

  // Warm up, then size a batch of operations to one interval.
  gpu::Event start[2], stop[2];
  for (int i = 0; i < kWarmupOps; ++i) load->run(stream.get());
  CUDA_CHECK(cudaEventRecord(start[0].get(), stream.get()));
  load->run(stream.get());
  CUDA_CHECK(cudaEventRecord(stop[0].get(), stream.get()));
  CUDA_CHECK(cudaEventSynchronize(stop[0].get()));
  const std::uint64_t first = load->fingerprint(stream.get());
  const double interval = params.at("interval_s").get<double>();
  const int batch =
      static_cast<int>(std::max(1.0, std::round(interval / std::max(seconds_between(start[0], stop[0]), 1e-6))));
  auto enqueue = [&](int slot) {
    CUDA_CHECK(cudaEventRecord(start[slot].get(), stream.get()));
    for (int i = 0; i < batch; ++i) load->run(stream.get());
    CUDA_CHECK(cudaEventRecord(stop[slot].get(), stream.get()));
  };

  compute::RankOutcome out;
  Json series = Json::array();
  double min_clock = 0, max_power = 0;
  const auto began = std::chrono::steady_clock::now();
  const double duration = params.at("duration_s").get<double>();
  // Two intervals in flight: the next one is queued before this one is read, so the GPU never
  // waits while the host reads the clocks (the load stays sustained).
  int slot = 0;
  enqueue(slot);
  for (double t = 0; t < duration; slot ^= 1) {
    enqueue(slot ^ 1);
    CUDA_CHECK(cudaEventSynchronize(stop[slot].get()));
    const double per_op = seconds_between(start[slot], stop[slot]) / batch;
    out.seconds.push_back(per_op);
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    Json point{{"t_s", t}, {"value", tp.work / per_op * tp.scale}};
    if (const auto r = telemetry.read()) {
      if (r->sm_clock_mhz) {
        point["sm_clock_mhz"] = *r->sm_clock_mhz;
        min_clock = min_clock == 0 ? *r->sm_clock_mhz : std::min<double>(min_clock, *r->sm_clock_mhz);
      }
      if (r->power_mw) {
        point["power_w"] = *r->power_mw / 1000.0;
        max_power = std::max(max_power, *r->power_mw / 1000.0);
      }
    }
    series.push_back(std::move(point));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // the interval queued last, not measured

  // The same inputs must give the same output at the end of the load as at its start.
  const std::uint64_t last = load->fingerprint(stream.get());
  out.checked = load->fingerprint_is_count() ? static_cast<long long>(triad_elements(params)) : 1;
  out.wrong = load->fingerprint_is_count() ? static_cast<long long>(last) : (first == last ? 0 : 1);
  std::vector<double> values;
  for (double s : out.seconds) values.push_back(tp.work / s * tp.scale);
  out.details = load->details();
  out.details["series"] = std::move(series);
  out.details["decay"] = decay(values);
  out.details["ops_per_interval"] = batch;
  if (min_clock > 0) out.details["min_sm_clock_mhz"] = min_clock;
  if (gpu.max_clock_mhz > 0) out.details["max_sm_clock_mhz"] = gpu.max_clock_mhz;  // what a GPU alone is held to
  if (max_power > 0) out.details["max_power_w"] = max_power;
  return out;
}

}  // namespace scalebench::burn
