// The quantized convolution graph (workloads/gpu/cudnn_quant_conv_graph.*) on the GPU against a
// reference in double on the host: random int8 or E4M3 inputs, per-channel scales from
// calibration, bias, residual and ReLU as a ResNet-50 bottleneck has them; every output element
// compared (int8 exactly up to +-1 for rounding at a tie, E4M3 within one of its steps); a second
// graph of the spec, on another handle and stream, shares the first's plans through a cache. Skipped
// where no GPU is visible; the FP8 cases where the GPU has no FP8 (before compute capability 8.9).
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/gpu_available.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/gpu/cudnn_quant_conv_graph.hpp"
#include "workloads/gpu/half_bits.hpp"

using namespace scalebench;
using namespace scalebench::gpu;

namespace {

struct Case {
  const char* name;
  QuantConvShape shape;
  QuantFormat input;
  QuantOutput output;
  bool residual;
  bool residual_fp16;  // else int8
  bool relu;
};

cudnnDataType_t cudnn_output(QuantOutput o) {
  switch (o) {
    case QuantOutput::kInt8:
      return CUDNN_DATA_INT8;
    case QuantOutput::kE4M3:
      return CUDNN_DATA_FP8_E4M3;
    case QuantOutput::kFp16:
      return CUDNN_DATA_HALF;
    case QuantOutput::kFp32:
      break;
  }
  return CUDNN_DATA_FLOAT;
}

// Random stored values: int8 anywhere in [-127, 127]; E4M3 of N(0, 1) values.
std::vector<std::uint8_t> random_inputs(std::size_t count, QuantFormat f, std::mt19937& rng) {
  std::vector<std::uint8_t> v(count);
  std::uniform_int_distribution<int> ints(-127, 127);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::uint8_t& b : v)
    b = f == QuantFormat::kInt8 ? static_cast<std::uint8_t>(static_cast<std::int8_t>(ints(rng)))
                                : encode_e4m3(normal(rng));
  return v;
}

DeviceBuffer upload(const void* data, std::size_t bytes, cudaStream_t s) {
  DeviceBuffer d(bytes);
  CUDA_CHECK(cudaMemcpyAsync(d.get(), data, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return d;
}

class QuantConvGraphGpu : public ::testing::TestWithParam<Case> {};

TEST_P(QuantConvGraphGpu, MatchesTheDoubleReference) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const Case& tc = GetParam();
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (tc.input == QuantFormat::kE4M3 && prop.major * 10 + prop.minor < 89)
    GTEST_SKIP() << "no FP8 before compute capability 8.9";
  const QuantConvShape& sh = tc.shape;
  const std::int64_t P = sh.p(), Q = sh.q(), outputs = sh.n * sh.k * P * Q;
  std::mt19937 rng(static_cast<unsigned>(sh.k * 131 + sh.c * 7 + sh.r + sh.stride * 3 + (tc.residual ? 1 : 0)));

  const std::vector<std::uint8_t> x = random_inputs(static_cast<std::size_t>(sh.n * sh.h * sh.w * sh.c), tc.input, rng);
  const std::vector<std::uint8_t> w = random_inputs(static_cast<std::size_t>(sh.k * sh.r * sh.s * sh.c), tc.input, rng);
  std::vector<double> acc(static_cast<std::size_t>(outputs));  // NHWC: (n, p, q, k)
  for (std::int64_t n = 0; n < sh.n; ++n)
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t q = 0; q < Q; ++q)
        for (std::int64_t k = 0; k < sh.k; ++k)
          acc[static_cast<std::size_t>(((n * P + p) * Q + q) * sh.k + k)] =
              reference_acc(sh, tc.input, x.data(), w.data(), n, k, p, q);

  // Scales as a calibrated network has them: x's one per tensor, w's one per output channel (a
  // different one for each of 7 channels in turn), y's from the largest magnitude the epilogue
  // produces in real units (scale_from_amax), so the requantization meets its range's end.
  const double x_scale = 0.05;
  std::vector<double> w_scale(static_cast<std::size_t>(sh.k));
  for (std::size_t k = 0; k < w_scale.size(); ++k) w_scale[k] = 0.01 * (1.0 + static_cast<double>(k % 7) / 7.0);
  double rms = 0;
  for (std::size_t i = 0; i < acc.size(); ++i) {
    const double real = acc[i] * x_scale * w_scale[i % w_scale.size()];
    rms += real * real;
  }
  rms = std::sqrt(rms / static_cast<double>(acc.size()));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> bias_real(w_scale.size());
  for (double& b : bias_real) b = 0.5 * rms * unit(rng);
  // The residual: int8 with its own scale, or fp16 values of N(0, 1) scaled to the output's size.
  std::vector<std::uint8_t> residual_bytes;
  std::vector<double> residual(tc.residual ? acc.size() : 0);
  const double r_scale = tc.residual_fp16 ? rms : rms / 50.0;
  if (tc.residual) {
    residual_bytes.resize(acc.size() * (tc.residual_fp16 ? 2 : 1));
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_int_distribution<int> ints(-100, 100);
    for (std::size_t i = 0; i < acc.size(); ++i) {
      if (tc.residual_fp16) {
        const __half h = __float2half(static_cast<float>(normal(rng)));
        std::uint16_t bits = 0;
        std::memcpy(&bits, &h, 2);
        std::memcpy(&residual_bytes[2 * i], &bits, 2);
        residual[i] = half_to_float(bits);
      } else {
        const auto v = static_cast<std::int8_t>(ints(rng));
        residual_bytes[i] = static_cast<std::uint8_t>(v);
        residual[i] = v;
      }
    }
  }
  double amax = 0;
  for (std::size_t i = 0; i < acc.size(); ++i) {
    const std::size_t k = i % w_scale.size();
    amax = std::max(amax, std::fabs(epilogue(acc[i] * x_scale * w_scale[k], 1.0, bias_real[k], tc.residual,
                                             tc.residual ? residual[i] : 0.0, r_scale, tc.relu)));
  }
  // int8: the largest value lands at 127 / 0.8, so the top of the range saturates; E4M3: below
  // 448; fp16 and fp32: int8's scale, outputs up to about 127.
  const double y_scale = tc.output == QuantOutput::kE4M3 ? scale_from_amax(amax, QuantFormat::kE4M3) * 1.25
                                                         : scale_from_amax(amax, QuantFormat::kInt8) * 0.8;
  const std::vector<float> scale = channel_scales(x_scale, w_scale, y_scale);
  std::vector<float> bias;
  for (double b : bias_real) bias.push_back(static_cast<float>(b / y_scale));
  const auto residual_scale = static_cast<float>(r_scale / y_scale);

  CudnnHandle handle;
  Stream stream;
  CUDNN_CHECK(cudnnSetStream(handle.get(), stream.get()));
  QuantConvSpec spec;
  spec.shape = sh;
  spec.input = tc.input;
  spec.output = cudnn_output(tc.output);
  spec.residual = tc.residual;
  spec.residual_type = tc.residual_fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_INT8;
  spec.relu = tc.relu;
  QuantPlanCache cache;
  QuantConvGraph graph(handle.get(), spec, std::int64_t{1} << 30, 16, &cache);
  graph.set_epilogue(scale, bias, residual_scale, stream.get());
  const DeviceBuffer x_d = upload(x.data(), x.size(), stream.get()), w_d = upload(w.data(), w.size(), stream.get());
  const DeviceBuffer r_d = upload(residual_bytes.data(), residual_bytes.size(), stream.get());
  DeviceBuffer y_d(static_cast<std::size_t>(outputs * output_bytes(tc.output)));
  const QuantConvTensors t{x_d.get(), w_d.get(), y_d.get(), tc.residual ? r_d.get() : nullptr};
  const std::vector<QuantPlanTrial> trials = graph.tune(t);
  for (const QuantPlanTrial& tr : trials)
    std::printf("  %s: %s\n", tr.name.c_str(),
                tr.seconds >= 0 ? (std::to_string(tr.seconds * 1e6) + " us").c_str() : tr.problem.c_str());
  CUDA_CHECK(cudaMemsetAsync(y_d.get(), 0x55, y_d.bytes(), stream.get()));  // no stale output passes
  graph.execute(t);
  std::vector<std::uint8_t> y(y_d.bytes());
  CUDA_CHECK(cudaMemcpyAsync(y.data(), y_d.get(), y.size(), cudaMemcpyDeviceToHost, stream.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  long long wrong = 0, exact = 0, saturated = 0;
  const double magnitude = tc.output == QuantOutput::kE4M3 ? 448.0 / 1.25 / 4 : 127.0 * 0.8 / 4;
  for (std::int64_t i = 0; i < outputs; ++i) {
    const auto k = static_cast<std::size_t>(i % sh.k);
    const double expected =
        epilogue(acc[static_cast<std::size_t>(i)], scale[k], bias[k], tc.residual,
                 tc.residual ? residual[static_cast<std::size_t>(i)] : 0.0, residual_scale, tc.relu);
    const double got = decode_output(tc.output, y.data(), i);
    if (tc.output == QuantOutput::kInt8) {
      exact += got == quantize_int8(expected);
      saturated += std::fabs(expected) > 127.5;
    }
    if (!output_matches(tc.output, tc.input, got, expected, magnitude)) {
      if (wrong < 5)
        ADD_FAILURE() << "output " << i << " (channel " << k << "): got " << got << ", expected " << expected;
      ++wrong;
    }
  }
  std::printf("  %s on %s: %lld of %lld outputs off the reference; %s, %zu plans\n", tc.name, graph.plan_name().c_str(),
              wrong, static_cast<long long>(outputs), spec.epilogue_text().c_str(), graph.plan_count());
  EXPECT_EQ(wrong, 0);
  if (tc.output == QuantOutput::kInt8) {
    // Off by one only where the fp32 epilogue meets a tie that double rounds the other way.
    EXPECT_GE(static_cast<double>(exact), 0.99 * static_cast<double>(outputs));
    EXPECT_GT(saturated, 0) << "the case should reach int8's saturation";
  }

  // A graph of the same spec on another handle and stream takes the cached plans and their tuning
  // (not timed again) and writes the same bytes.
  CudnnHandle other_handle;
  Stream other;
  CUDNN_CHECK(cudnnSetStream(other_handle.get(), other.get()));
  QuantConvGraph again(other_handle.get(), spec, std::int64_t{1} << 30, 16, &cache);
  EXPECT_EQ(cache.specs(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(again.plan_name(), graph.plan_name());
  const std::vector<QuantPlanTrial> retuned = again.tune(t);
  ASSERT_EQ(retuned.size(), trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) EXPECT_EQ(retuned[i].seconds, trials[i].seconds) << "timed again";
  again.set_epilogue(scale, bias, residual_scale, other.get());
  DeviceBuffer y2_d(y_d.bytes());
  CUDA_CHECK(cudaMemsetAsync(y2_d.get(), 0x55, y2_d.bytes(), other.get()));
  again.execute({x_d.get(), w_d.get(), y2_d.get(), t.residual});
  std::vector<std::uint8_t> y2(y2_d.bytes());
  CUDA_CHECK(cudaMemcpyAsync(y2.data(), y2_d.get(), y2.size(), cudaMemcpyDeviceToHost, other.get()));
  CUDA_CHECK(cudaStreamSynchronize(other.get()));
  EXPECT_TRUE(y2 == y) << "the shared plans wrote other bytes on the second stream";
}

// ResNet-50's channel counts (64 and 256), its 1x1 and 3x3 convolutions at stride 1 and 2, with
// and without a residual, ReLU on and off, on 2 images of 14 x 14.
const QuantFormat kI8 = QuantFormat::kInt8, kE4 = QuantFormat::kE4M3;
INSTANTIATE_TEST_SUITE_P(
    ResNet50Layers, QuantConvGraphGpu,
    ::testing::Values(
        Case{"int8_1x1_64to256_relu", {2, 64, 14, 14, 256, 1, 1, 0, 1}, kI8, QuantOutput::kInt8, false, false, true},
        Case{"int8_1x1_256to64_residual_relu",
             {2, 256, 14, 14, 64, 1, 1, 0, 1},
             kI8,
             QuantOutput::kInt8,
             true,
             false,
             true},
        Case{"int8_3x3_64_norelu", {2, 64, 14, 14, 64, 3, 3, 1, 1}, kI8, QuantOutput::kInt8, false, false, false},
        Case{"int8_3x3s2_64_residual16_relu",
             {2, 64, 14, 14, 64, 3, 3, 1, 2},
             kI8,
             QuantOutput::kInt8,
             true,
             true,
             true},
        Case{"int8_1x1s2_64to256_fp16out",
             {2, 64, 14, 14, 256, 1, 1, 0, 2},
             kI8,
             QuantOutput::kFp16,
             false,
             false,
             false},
        Case{"int8_3x3_64_residual_fp32out",
             {2, 64, 14, 14, 64, 3, 3, 1, 1},
             kI8,
             QuantOutput::kFp32,
             true,
             false,
             false},
        Case{"fp8_1x1_64to256_relu", {2, 64, 14, 14, 256, 1, 1, 0, 1}, kE4, QuantOutput::kE4M3, false, false, true},
        Case{"fp8_1x1_256to64_residual16_relu",
             {2, 256, 14, 14, 64, 1, 1, 0, 1},
             kE4,
             QuantOutput::kE4M3,
             true,
             true,
             true},
        Case{"fp8_3x3s2_64_fp16out", {2, 64, 14, 14, 64, 3, 3, 1, 2}, kE4, QuantOutput::kFp16, false, false, false},
        Case{"fp8_3x3_64_residual16_norelu",
             {2, 64, 14, 14, 64, 3, 3, 1, 1},
             kE4,
             QuantOutput::kE4M3,
             true,
             true,
             false}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// A shape cuDNN cannot take is refused before cuDNN sees it, and the message says why.
TEST(QuantConvGraphGpuErrors, ChannelsNotInVectorsOfFourAreRefusedWithWhy) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  CudnnHandle handle;
  QuantConvSpec spec;
  spec.shape = {1, 3, 224, 224, 64, 7, 7, 3, 2};  // ResNet-50's stem, 3 channels
  try {
    QuantConvGraph graph(handle.get(), spec);
    FAIL() << "a 3-channel int8 convolution was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("multiples of 4"), std::string::npos) << e.what();
  }
}

}  // namespace
#endif
