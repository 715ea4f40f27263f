// GPU checks of the quantized net (int8 and E4M3 through cuDNN's quantized convolution graphs):
// its logits follow the fp32 net it was made from, on images it was not calibrated on, closely
// enough that a mix-up of images could not pass; a net with ops it does not run is refused by the
// layer's name. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/unit/error_text.hpp"
#include "tests/unit/gpu_available.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/graph_capture.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/quant_net.hpp"
#include "workloads/train/train_kernels.cuh"

namespace scalebench::train {
namespace {
using test_support::have_gpu;

constexpr int kBatch = 256;

// An fp16 net's logits on the host, as floats.
std::vector<float> host_halves(const void* p, std::size_t n) {
  std::vector<std::uint16_t> bits(n);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(bits.data(), p, n * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = gpu::half_to_float(bits[i]);
  return out;
}

std::vector<float> host_floats(const void* p, std::size_t n) {
  std::vector<float> out(n);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(out.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

// ||got - want|| over the spread of want about each class's mean over the batch: what tells one
// image's logits from another's (0 when equal, about 1.4 for another batch's images).
double relative_error(const std::vector<float>& got, const std::vector<float>& want, int classes) {
  const std::size_t rows = want.size() / static_cast<std::size_t>(classes);
  std::vector<double> mean(static_cast<std::size_t>(classes), 0.0);
  for (std::size_t i = 0; i < want.size(); ++i) mean[i % static_cast<std::size_t>(classes)] += want[i];
  for (double& m : mean) m /= static_cast<double>(rows);
  double err = 0, spread = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = want[i] - mean[i % static_cast<std::size_t>(classes)];
    err += (got[i] - want[i]) * static_cast<double>(got[i] - want[i]);
    spread += d * d;
  }
  return std::sqrt(err / spread);
}

int top1_agree(const std::vector<float>& a, const std::vector<float>& b, int classes) {
  int agree = 0;
  for (std::size_t r = 0; r < a.size() / static_cast<std::size_t>(classes); ++r) {
    int ia = 0, ib = 0;
    for (int k = 1; k < classes; ++k) {
      if (a[r * classes + k] > a[r * classes + ia]) ia = k;
      if (b[r * classes + k] > b[r * classes + ib]) ib = k;
    }
    agree += ia == ib;
  }
  return agree;
}

NetConfig inference_config(compute::Precision p) {
  NetConfig nc;
  nc.precision = p;
  nc.batch = kBatch;
  nc.training = false;
  nc.search = false;
  return nc;
}

// fmnist-resnet at kBatch with random weights, batch norm's statistics from real activations (the
// batch of seed 50), and its logits on any batch.
struct RandomFmnist {
  RandomFmnist(compute::Precision p, cudaStream_t stream)
      : s(stream),
        net(build_model("fmnist-resnet"), inference_config(p), stream),
        t(net.compute_type()),
        elements(kBatch * net.model().layers[0].out.elements()),
        classes(net.model().classes) {
    images(net.images(), 50);
    net.forward(Pass::kCalibrate);
  }
  void images(void* to, std::uint64_t seed) const { fill_normal(to, t, elements, 0.0f, 1.0f, seed, s); }
  // The net's logits on the batch of `seed`, as floats.
  std::vector<float> logits(std::uint64_t seed) {
    images(net.images(), seed);
    net.forward(Pass::kInfer);
    const auto n = static_cast<std::size_t>(kBatch) * classes;
    return t == DType::kF32 ? host_floats(net.logits(), n) : host_halves(net.logits(), n);
  }
  cudaStream_t s;
  Net net;
  DType t;
  long long elements;
  int classes;
};

TEST(QuantNetGpu, FollowsTheFp32NetItQuantizes) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  RandomFmnist f(compute::Precision::kFp32, stream.get());
  const int classes = f.classes;
  // The reference logits of two batches: A, which the quantized net scores, and B, a mix-up.
  const std::vector<float> want_a = f.logits(7), want_b = f.logits(8);

  // int8 and E4M3, each with the image's convolution quantized and in fp32 (E4M3's default).
  struct Case {
    gpu::QuantFormat format;
    bool first_conv_trained;
    double most;  // of the logits' spread
  };
  for (const Case& c : {Case{gpu::QuantFormat::kInt8, false, 0.25}, Case{gpu::QuantFormat::kInt8, true, 0.25},
                        Case{gpu::QuantFormat::kE4M3, false, 0.6}, Case{gpu::QuantFormat::kE4M3, true, 0.6}}) {
    const std::string what = std::string(gpu::name(c.format)) + (c.first_conv_trained ? ", first conv fp32" : "");
    SCOPED_TRACE(what);
    QuantOptions o;
    o.format = c.format;
    o.calibration_batches = 2;
    o.trained_convolutions = c.first_conv_trained ? 1 : 0;
    QuantNet q(f.net, o, [&](int k) { f.images(f.net.images(), 100 + static_cast<std::uint64_t>(k)); });
    f.images(q.images(), 7);
    q.forward();
    const std::vector<float> got = host_floats(q.logits(), static_cast<std::size_t>(kBatch) * classes);
    const double err = relative_error(got, want_a, classes), mixed = relative_error(got, want_b, classes);
    const int agree = top1_agree(got, want_a, classes);
    std::printf("%s: logits' error %.4f of their spread (%.4f against other images), top-1 agrees on %d of %d\n",
                what.c_str(), err, mixed, agree, kBatch);
    EXPECT_LT(err, c.most);
    EXPECT_GT(mixed, 1.0) << "the check could not tell the images apart";
    EXPECT_GE(agree, kBatch * 8 / 10);
    EXPECT_EQ(q.describe().at("convolutions").size(), 7u);  // fmnist-resnet's seven, each with its batch norm
  }
}

// A mixed net: its first convolutions unquantized in the trained net's fp16 (with the fused
// epilogue, residual and pooling there too), the rest in 8 bits. The more convolutions in fp16,
// the closer to the fp16 net: all seven leave only the last tensor's quantization. The timed
// split is one of the counts, and the describe says which layers run how.
TEST(QuantNetGpu, MixedNetsFollowTheFp16NetTheCloserTheMoreLayersStayInFp16) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  RandomFmnist fmnist(compute::Precision::kFp16, stream.get());
  const int classes = fmnist.classes;
  const std::vector<float> want = fmnist.logits(7);
  for (gpu::QuantFormat f : {gpu::QuantFormat::kInt8, gpu::QuantFormat::kE4M3}) {
    double previous = 1e9;
    for (int n : {1, 3, 7, QuantOptions::kByTiming}) {
      const std::string what = std::string(gpu::name(f)) + ", " + std::to_string(n) + " in fp16";
      SCOPED_TRACE(what);
      QuantOptions o;
      o.format = f;
      o.calibration_batches = 2;
      o.trained_convolutions = n;
      QuantNet q(fmnist.net, o,
                 [&](int k) { fmnist.images(fmnist.net.images(), 100 + static_cast<std::uint64_t>(k)); });
      fmnist.images(q.images(), 7);
      q.forward();
      const double err = relative_error(host_floats(q.logits(), want.size()), want, classes);
      const Json d = q.describe();
      std::printf("%s: logits' error %.4f of their spread, split %s\n", what.c_str(), err,
                  d.at("split").dump().c_str());
      if (n == QuantOptions::kByTiming) {
        EXPECT_GE(q.trained_convolutions(), 1);
        EXPECT_LE(q.trained_convolutions(), 7);
        EXPECT_EQ(d.at("split").at("chosen_by"), "timing");
        EXPECT_EQ(d.at("split").at("times").size(), 7u);
        EXPECT_LT(err, f == gpu::QuantFormat::kInt8 ? 0.25 : 0.6);
        continue;
      }
      EXPECT_EQ(q.trained_convolutions(), n);
      // The graphs after the image's legacy convolution: fp16 ones, then 8-bit ones.
      const Json& convs = d.at("convolutions");
      ASSERT_EQ(convs.size(), 7u);
      for (int i = 1; i < 7; ++i) {
        const std::string graph = convs.at(static_cast<std::size_t>(i)).at("graph").get<std::string>();
        EXPECT_EQ(graph.find(i < n ? " fp16 " : std::string(" ") + gpu::name(f) + " ") != std::string::npos, true)
            << graph;
      }
      EXPECT_LT(err, n == 7 ? 0.05 : previous + 0.02) << "more layers in fp16 are no closer to the fp16 net";
      previous = err;
    }
  }
}

// Every convolution in fp16 (the fused fp16 engine's graphs): nothing is calibrated, the features
// are averaged unquantized, and the logits are the fp16 net's but for the batch norm folded into the
// weights and the graphs' order of sums. In bf16 the net is refused with why: its fused graphs
// answered with nothing like the bf16 net's logits on an H200 (11 x their spread apart).
TEST(QuantNetGpu, EveryConvolutionFusedFollowsTheNetItIsMadeFrom) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  {
    RandomFmnist bf16(compute::Precision::kBf16, stream.get());
    QuantOptions o;
    o.trained_convolutions = QuantOptions::kEvery;
    const std::string why = test_support::error_of([&] { QuantNet(bf16.net, o, [](int) {}); });
    EXPECT_NE(why.find("unquantized convolutions run in fp16 only"), std::string::npos) << why;
  }
  {
    RandomFmnist fmnist(compute::Precision::kFp16, stream.get());
    const std::string what = gpu::dtype_name(fmnist.t);
    SCOPED_TRACE(what);
    const std::vector<float> want = fmnist.logits(7), other = fmnist.logits(8);
    QuantOptions o;
    o.trained_convolutions = QuantOptions::kEvery;
    int loads = 0;
    QuantNet q(fmnist.net, o, [&](int) { ++loads; });
    fmnist.images(q.images(), 7);
    q.forward();
    const std::vector<float> got = host_floats(q.logits(), want.size());
    const double err = relative_error(got, want, fmnist.classes), mixed = relative_error(got, other, fmnist.classes);
    std::printf("%s, every convolution fused: logits' error %.4f of their spread (%.4f against other images)\n",
                what.c_str(), err, mixed);
    EXPECT_EQ(loads, 0) << "calibrated with no 8-bit layer";
    EXPECT_EQ(q.trained_convolutions(), 7);
    EXPECT_LT(err, 0.02);  // an H200: 0.0067
    EXPECT_GT(mixed, 1.0) << "the check could not tell the images apart";
    const Json d = q.describe();
    EXPECT_EQ(d.at("format"), "none: every layer in " + what);
    for (const Json& conv : d.at("convolutions")) EXPECT_EQ(conv.at("output_scale"), nullptr) << conv.dump();
    // Where its time goes: every step timed, the kinds summing to the batch, nothing quantized.
    const Json prof = q.profile(2);
    double sum = 0;
    for (const auto& [kind, us] : prof.at("by_kind_us").items()) sum += us.get<double>();
    EXPECT_NEAR(sum, prof.at("batch_us").get<double>(), 1e-6 * sum);
    EXPECT_EQ(prof.at("by_kind_us").count("quantizing"), 0u) << prof.at("by_kind_us").dump();
    EXPECT_GT(prof.at("by_kind_us").value("convolutions in " + what, 0.0), 0.0) << prof.at("by_kind_us").dump();
    EXPECT_EQ(prof.at("steps").size(), 11u);  // 7 convolutions, 2 max pools, the average pool, fc
    for (const Json& st : prof.at("steps")) EXPECT_GT(st.at("us").get<double>(), 0.0) << st.dump();
  }
}

// Two nets made alike on two streams, sharing one plan cache as an engine's streams do, each
// replayed as a CUDA graph: the same images give the same logits, bit for bit, whichever ran last.
// (ResNet-50's engines on 2-3 streams failed their batching check about half the time on an H200
// until the nets' weights were copied on their own stream, a543eea.) fp16 with every convolution
// fused, and int8 mixed.
TEST(QuantNetGpu, NetsOnTwoStreamsSharingPlansAnswerAlikeAsGraphs) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream first, second;
  RandomFmnist a(compute::Precision::kFp16, first.get()), b(compute::Precision::kFp16, second.get());
  for (int convs : {QuantOptions::kEvery, 3}) {
    SCOPED_TRACE(convs == QuantOptions::kEvery ? "fp16, every convolution fused" : "int8, 3 in fp16");
    QuantOptions o;
    o.trained_convolutions = convs;
    o.calibration_batches = 2;
    o.plans = std::make_shared<gpu::QuantPlanCache>();
    QuantNet qa(a.net, o, [&](int k) { a.images(a.net.images(), 100 + static_cast<std::uint64_t>(k)); });
    o.scales_from = &qa;
    QuantNet qb(b.net, o, [](int) {});
    qa.forward();  // the first passes uncaptured, as the engine runs them
    qb.forward();
    gpu::GraphExec ga = gpu::capture_graph(first.get(), [&] { qa.forward(); });
    gpu::GraphExec gb = gpu::capture_graph(second.get(), [&] { qb.forward(); });
    const std::size_t n = static_cast<std::size_t>(kBatch) * a.classes;
    auto run = [&](QuantNet& q, const gpu::GraphExec& g, cudaStream_t s) {
      a.images(q.images(), 7);  // on a's stream: synchronised before the copy out
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(cudaGraphLaunch(g.get(), s));
      return host_floats(q.logits(), n);
    };
    const std::vector<float> from_a = run(qa, ga, first.get()), from_b = run(qb, gb, second.get()),
                             again_a = run(qa, ga, first.get());
    EXPECT_EQ(from_a, from_b) << "the second stream's net answered otherwise";
    EXPECT_EQ(from_a, again_a) << "the first stream's net answered otherwise after the second ran";
  }
}

TEST(QuantNetGpu, RefusesANetWithOpsItDoesNotRunByTheLayersName) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  NetConfig nc;
  nc.precision = compute::Precision::kFp32;
  nc.batch = 8;
  nc.training = false;
  nc.search = false;
  Net net(build_model("tiny"), nc, stream.get());  // conv0 has a bias and a ReLU, no batch norm
  const std::string why = test_support::error_of([&] { QuantNet(net, QuantOptions{}, [](int) {}); });
  EXPECT_EQ(why.rfind("quantized inference: layer conv0 (conv) is not read by its batch norm alone", 0), 0u) << why;
}

}  // namespace
}  // namespace scalebench::train
#endif
