#include "workloads/conv/conv_quant_bench.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/splitmix64.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_quant_conv_graph.hpp"
#include "workloads/gpu/graph_capture.hpp"

namespace scalebench::conv {

namespace {
using gpu::QuantFormat;

// Outputs land at this typical size in the output's units (int8 steps or E4M3 values): a few
// saturate at int8's 127, as calibrated activations do.
constexpr double kOutputRms = 32.0;

// Stored 8-bit values from a counter hash (quick enough for ResNet-50's largest tensors at batch
// 64, 51 M elements): int8 in [-127, 127]; E4M3 of magnitude 1/4 to 3.75, either sign.
std::vector<std::uint8_t> random_bytes(std::size_t count, QuantFormat f, std::uint64_t seed) {
  std::vector<std::uint8_t> v(count);
  std::uint64_t z = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 8 == 0) z = splitmix64(seed * 0x9E3779B97F4A7C15ull + i);
    const auto b = static_cast<std::uint8_t>(z >> (8 * (i % 8)));
    if (f == QuantFormat::kInt8)
      v[i] = b == 0x80 ? 0x81 : b;  // -128 left out: symmetric, as calibration quantizes
    else
      v[i] = static_cast<std::uint8_t>((b & 0x80) | ((5 + (b >> 3) % 4) << 3) | (b & 7));
  }
  return v;
}

gpu::DeviceBuffer upload(const std::vector<std::uint8_t>& host, cudaStream_t s) {
  gpu::DeviceBuffer d(host.size());
  CUDA_CHECK(cudaMemcpyAsync(d.get(), host.data(), host.size(), cudaMemcpyHostToDevice, s));
  return d;
}

// The outputs checked: spread over the whole tensor by a hash, the first and last included.
std::vector<std::int64_t> sample_outputs(std::int64_t outputs, int count) {
  std::vector<std::int64_t> out{0, outputs - 1};
  for (int i = 2; i < count && i < outputs; ++i)
    out.push_back(
        static_cast<std::int64_t>(splitmix64(static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(outputs)));
  return out;
}

// A point's convolution as the graph takes it, or why it cannot.
std::optional<gpu::QuantConvShape> quant_shape(const ConvShape& s, std::string& why) {
  if (s.groups != 1 || s.dil_h != 1 || s.dil_w != 1 || s.pad_h != s.pad_w || s.stride_h != s.stride_w) {
    why = "the quantized graph takes equal padding and stride in both dimensions, no dilation, no groups";
    return std::nullopt;
  }
  return gpu::QuantConvShape{s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.pad_h, s.stride_h};
}
}  // namespace

compute::RankOutcome measure_quantized(cudnnHandle_t handle, cudaStream_t stream, const ConvPoint& pt,
                                       const Config& cfg, const compute::TimingConfig& timing, double peak_ops) {
  compute::RankOutcome out;
  const bool int8 = pt.precision == compute::Precision::kInt8;
  const QuantFormat fmt = int8 ? QuantFormat::kInt8 : QuantFormat::kE4M3;
  std::string why;
  const std::optional<gpu::QuantConvShape> shape = quant_shape(pt.shape, why);
  gpu::QuantConvSpec spec;
  if (shape) {
    spec.shape = *shape;
    spec.input = fmt;
    spec.output = int8 ? CUDNN_DATA_INT8 : CUDNN_DATA_FP8_E4M3;
    spec.residual = pt.epilogue == Epilogue::kBiasResidualRelu;
    spec.residual_type = int8 ? CUDNN_DATA_INT8 : CUDNN_DATA_HALF;
    spec.relu = pt.epilogue != Epilogue::kBias;
    why = spec.invalid();
  }
  if (!why.empty()) {
    out.status = "skipped";
    out.reason = why;
    return out;
  }
  const gpu::QuantConvShape& sh = spec.shape;
  const std::int64_t outputs = sh.n * sh.k * sh.p() * sh.q();

  // Inputs and the epilogue: per-channel scales put the sampled outputs' RMS at kOutputRms.
  const std::vector<std::uint8_t> x = random_bytes(static_cast<std::size_t>(sh.n * sh.h * sh.w * sh.c), fmt, 1);
  const std::vector<std::uint8_t> w = random_bytes(static_cast<std::size_t>(sh.k * sh.r * sh.s * sh.c), fmt, 2);
  const std::vector<std::int64_t> picks = sample_outputs(outputs, 1024);
  std::vector<double> acc;
  double acc_rms = 0;
  for (std::int64_t i : picks) {  // i indexes y in NHWC: ((n * P + p) * Q + q) * K + k
    const std::int64_t k = i % sh.k, q = i / sh.k % sh.q(), p = i / sh.k / sh.q() % sh.p(),
                       n = i / sh.k / sh.q() / sh.p();
    acc.push_back(gpu::reference_acc(sh, fmt, x.data(), w.data(), n, k, p, q));
    acc_rms += acc.back() * acc.back();
  }
  acc_rms = std::max(std::sqrt(acc_rms / static_cast<double>(acc.size())), 1e-30);
  std::vector<float> scale, bias;
  for (std::int64_t k = 0; k < sh.k; ++k) {
    scale.push_back(static_cast<float>(kOutputRms / acc_rms * (0.75 + 0.5 * static_cast<double>(k % 8) / 8.0)));
    bias.push_back(static_cast<float>(kOutputRms * 0.125 * static_cast<double>(k % 5 - 2)));
  }
  // The residual: int8 values of the block's input (scale 1/4 of the output's), or fp16 N(0,1)-like
  // values from the E4M3 grid (scale kOutputRms / 4).
  std::vector<std::uint8_t> residual;
  std::vector<double> residual_value;  // at the sampled outputs
  float residual_scale = 1.0f;
  if (spec.residual) {
    const std::vector<std::uint8_t> r = random_bytes(static_cast<std::size_t>(outputs), fmt, 3);
    if (int8) {
      residual = r;
      residual_scale = 0.25f;
    } else {
      residual.resize(r.size() * 2);
      for (std::size_t i = 0; i < r.size(); ++i) {
        const __half h = __float2half(static_cast<float>(gpu::decode_e4m3(r[i])));
        std::memcpy(&residual[2 * i], &h, 2);
      }
      residual_scale = static_cast<float>(kOutputRms / 4);
    }
    for (std::int64_t i : picks)
      residual_value.push_back(gpu::decode(fmt, r[static_cast<std::size_t>(i)]));  // fp16 holds E4M3's values
  }

  std::optional<gpu::QuantConvGraph> graph;
  try {
    graph.emplace(handle, spec, std::int64_t{1} << 30, cfg.plans);
  } catch (const Error& e) {
    out.status = "skipped";
    out.reason = e.what();
    return out;
  }
  graph->set_epilogue(scale, bias, residual_scale, stream);
  const gpu::DeviceBuffer x_d = upload(x, stream), w_d = upload(w, stream), r_d = upload(residual, stream);
  gpu::DeviceBuffer y_d(static_cast<std::size_t>(outputs));  // one byte an element, int8 or E4M3
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const gpu::QuantConvTensors t{x_d.get(), w_d.get(), y_d.get(), spec.residual ? r_d.get() : nullptr};

  Json details{{"selection", "tuned"}, {"peak_tflops", peak_ops * 1e-12}, {"epilogue", spec.epilogue_text()}};
  Json plans = Json::array();
  for (const gpu::QuantPlanTrial& tr : graph->tune(t))
    plans.push_back(tr.seconds >= 0 ? Json{{"plan", tr.name}, {"us", tr.seconds * 1e6}}
                                    : Json{{"plan", tr.name}, {"problem", tr.problem}});
  details["plans"] = plans;
  details["algo"] = graph->plan_name();
  details["math_type"] = int8 ? "int32 sums" : "fp32 sums";
  details["workspace_bytes"] = graph->workspace_bytes();

  // Timing as for the other precisions: a CUDA graph of kGraphConvs convolutions, replayed, or one
  // call at a time where capture is refused (the reason recorded).
  constexpr int kGraphConvs = 20;
  std::optional<gpu::GraphExec> captured;
  if (cfg.graph) {
    try {
      captured = gpu::capture_graph(
          stream,
          [&] {
            for (int i = 0; i < kGraphConvs; ++i) graph->execute(t);
          },
          0, cudaStreamCaptureModeThreadLocal);
    } catch (const std::exception& e) {
      (void)cudaGetLastError();
      details["graph_problem"] = e.what();
    }
  }
  if (captured) {
    out.seconds = compute::time_on_stream(stream, timing,
                                          [&](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(captured->get(), s)); });
    for (double& sec : out.seconds) sec /= kGraphConvs;
    details["timing"] = "graph";
    details["graph_convs"] = kGraphConvs;
  } else {
    out.seconds = compute::time_on_stream(stream, timing, [&](cudaStream_t) { graph->execute(t); });
    details["timing"] = "direct";
  }

  if (cfg.check) {
    std::vector<std::uint8_t> y(static_cast<std::size_t>(outputs));
    CUDA_CHECK(cudaMemcpyAsync(y.data(), y_d.get(), y.size(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const gpu::QuantOutput o = int8 ? gpu::QuantOutput::kInt8 : gpu::QuantOutput::kE4M3;
    long long wrong = 0;
    for (std::size_t j = 0; j < picks.size(); ++j) {
      const auto k = static_cast<std::size_t>(picks[j] % sh.k);
      const double expected = gpu::epilogue(acc[j], scale[k], bias[k], spec.residual,
                                            spec.residual ? residual_value[j] : 0.0, residual_scale, spec.relu);
      const double got = gpu::decode_output(o, y.data(), picks[j]);
      if (!gpu::output_matches(o, fmt, got, expected, kOutputRms)) {
        if (wrong == 0) details["first_wrong"] = Json{{"index", picks[j]}, {"got", got}, {"expected", expected}};
        ++wrong;
      }
    }
    out.wrong = wrong;
    out.checked = static_cast<long long>(picks.size());
    details["tolerance"] = int8 ? "the double reference requantized, +-1" : "one E4M3 step of the double reference";
  }
  out.details = details;
  return out;
}

}  // namespace scalebench::conv
