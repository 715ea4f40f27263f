// GPU checks of the train workload's executor as a whole: the tiny nets' gradients against finite
// differences, grouped convolutions through cuDNN, what `dump` writes, and the all-reduce shards.
// The kernels one by one against host references are in train_kernels_gpu_test.cpp. Skipped where
// no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "tests/unit/workloads/train/device_values.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/model_builder.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/train_bench.hpp"
#include "workloads/train/train_dump.hpp"
#include "workloads/train/train_kernels.cuh"

using namespace scalebench;

namespace {
using scalebench::test_support::download_as;
using scalebench::test_support::have_gpu;
using scalebench::test_support::upload_as;
}  // namespace

// The tiny net's backward pass (every op: conv with bias, ReLU, batch norm with residual add,
// max pool, average pool, fc, softmax cross-entropy) against finite differences of its loss.
TEST(TrainGpu, TinyNetGradientsMatchFiniteDifferences) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const Json r = train::TrainBench::gradient_check(stream.get());
  EXPECT_EQ(r.at("tensors").get<long long>(), 19);
  EXPECT_EQ(r.at("wrong").get<long long>(), 0) << r.dump(1);
}

// The same for Inception's ops (tiny-inception): four branches reading one layer (its gradient is
// their sum), 1x3 and 3x1 convolutions, 3x3 average pools with and without the padding counted,
// concatenations, a strided conv beside a max pool, and an auxiliary head whose loss weighs 0.4.
TEST(TrainGpu, TinyInceptionGradientsMatchFiniteDifferences) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const Json r = train::TrainBench::gradient_check(stream.get(), "tiny-inception");
  EXPECT_EQ(r.at("model").get<std::string>(), "tiny-inception");
  EXPECT_EQ(r.at("tensors").get<long long>(), 28);  // 8 convolutions, 8 batch norms x 2, 2 fc x 2
  EXPECT_EQ(r.at("wrong").get<long long>(), 0) << r.dump(1);
  EXPECT_EQ(train::TrainBench::gradient_check_model(train::build_model("inception3")), "tiny-inception");
  EXPECT_EQ(train::TrainBench::gradient_check_model(train::build_model("resnet50")), "tiny");
}

// The same for NASNet's ops (tiny-nasnet: a reduction cell and a normal cell): depthwise
// convolutions of 3x3 to 7x7 at strides 1 and 2, pointwise ones, adds (one of a pool to itself),
// batch norms that add the other branch without a ReLU, a ReLU read by several branches, the
// factorized reduction's shifted subsampling from an odd 7x7, max and average pools of stride 2.
// With the depthwise convolutions in our kernels (the default) and in cuDNN's, and the 1x1 ones in
// cuDNN's (fp32's auto) and as matmuls (what a 16-bit NASNet run's check takes).
TEST(TrainGpu, TinyNasnetGradientsMatchFiniteDifferences) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  for (const auto& [depthwise, pointwise] :
       {std::pair<std::string, std::string>{"ours", "auto"}, {"cudnn", "auto"}, {"ours", "gemm"}}) {
    SCOPED_TRACE("depthwise " + depthwise + ", pointwise " + pointwise);
    const Json r = train::TrainBench::gradient_check(stream.get(), "tiny-nasnet", depthwise, pointwise);
    EXPECT_EQ(r.at("model").get<std::string>(), "tiny-nasnet");
    EXPECT_EQ(r.at("depthwise").get<std::string>(), depthwise);
    EXPECT_EQ(r.at("pointwise_matmuls").get<int>() > 0, pointwise == "gemm");
    // stem conv + bn 3, reduction cell 1x1 + bn 3 and 5 separable blocks of 8, normal cell
    // factorized reduction 4, 1x1 + bn 3, 5 separable blocks of 8, fc 2.
    EXPECT_EQ(r.at("tensors").get<long long>(), 3 + 43 + 47 + 2);
    EXPECT_EQ(r.at("wrong").get<long long>(), 0) << r.dump(1);
  }
  EXPECT_EQ(train::TrainBench::gradient_check_model(train::build_model("nasnet")), "tiny-nasnet");
}

namespace {
// One training pass of a net: its loss and its gradients (fp32 nets: the flat buffer as floats).
struct TrainPass {
  double loss = 0;
  std::vector<float> grads;
};
TrainPass train_pass(train::Net& net, const train::Model& m) {
  net.forward(train::Pass::kTrain);
  net.backward([](int) {});
  TrainPass p{net.read_loss(), std::vector<float>(static_cast<std::size_t>(m.param_slots))};  // read_loss waits
  CUDA_CHECK(cudaMemcpy(p.grads.data(), net.grads(), p.grads.size() * 4, cudaMemcpyDeviceToHost));
  return p;
}

// Two fp32 passes of one model give the same loss and, layer by layer, the same gradients (to 1e-4
// of the layer's largest); `must_move` layers must have gradients, or the comparison says nothing.
template <class MustMove>
void expect_same_pass(const train::Model& m, const TrainPass& a, const TrainPass& b, MustMove must_move) {
  EXPECT_NEAR(a.loss, b.loss, 1e-6 * std::fabs(b.loss));
  for (const train::Layer& l : m.layers) {
    if (l.params == 0) continue;
    double largest = 0, diff = 0;
    for (long long k = l.param_offset; k < l.param_offset + l.params; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      largest = std::max(largest, std::fabs(static_cast<double>(b.grads[i])));
      diff = std::max(diff, std::fabs(static_cast<double>(a.grads[i]) - b.grads[i]));
    }
    if (must_move(l)) {
      EXPECT_GT(largest, 0.0) << l.name;
    }
    EXPECT_LE(diff, 1e-4 * largest) << l.name;
  }
}

}  // namespace

// Our depthwise kernels and cuDNN's grouped convolution give tiny-nasnet (its 20 depthwise
// convolutions: 3x3 to 7x7, strides 1 and 2, inputs whose gradient several branches add) the same
// loss and gradients in fp32, and describe() counts the convolutions that ran in ours.
TEST(TrainGpu, TinyNasnetDepthwiseKernelsMatchCudnn) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const train::Model m = train::build_model("tiny-nasnet");
  std::vector<TrainPass> passes;
  for (const std::string depthwise : {"ours", "cudnn"}) {
    train::NetConfig nc;
    nc.batch = 8;
    nc.search = false;
    nc.depthwise = depthwise;
    train::Net net(m, nc, stream.get());
    EXPECT_EQ(net.describe().at("depthwise_kernels").get<int>(), depthwise == "ours" ? 20 : 0);
    passes.push_back(train_pass(net, m));
  }
  expect_same_pass(m, passes[0], passes[1], [](const train::Layer& l) { return l.groups > 1; });
}

// tiny-nasnet's 1x1 convolutions as cuBLASLt matmuls over the batch's pixels (pointwise gemm) give
// the loss and gradients of cuDNN's convolutions in fp32, inputs whose gradient several branches add
// included; in fp16, `auto` takes the matmuls exactly where the channels are not a multiple of 8.
TEST(TrainGpu, TinyNasnetPointwiseMatmulsMatchCudnn) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const train::Model m = train::build_model("tiny-nasnet");
  int pointwise = 0, unaligned = 0;
  for (const train::Layer& l : m.layers)
    if (l.op == train::Op::kConv && l.kernel_h == 1 && l.kernel_w == 1 && l.stride == 1 && l.pad_h == 0 &&
        l.pad_w == 0 && l.groups == 1) {
      ++pointwise;
      unaligned += m.layers[static_cast<std::size_t>(l.input)].out.c % 8 != 0 || l.channels % 8 != 0;
    }
  ASSERT_GT(pointwise, 0);
  std::vector<TrainPass> passes;
  for (const std::string mode : {"gemm", "cudnn"}) {
    train::NetConfig nc;
    nc.batch = 8;
    nc.search = false;
    nc.pointwise = mode;
    train::Net net(m, nc, stream.get());
    EXPECT_EQ(net.describe().at("pointwise_matmuls").get<int>(), mode == "gemm" ? pointwise : 0);
    passes.push_back(train_pass(net, m));
  }
  expect_same_pass(m, passes[0], passes[1],
                   [](const train::Layer& l) { return l.op == train::Op::kConv && l.kernel_h == 1; });
  std::vector<double> half_losses;
  for (const std::string mode : {"auto", "cudnn"}) {
    train::NetConfig nc;
    nc.precision = compute::Precision::kFp16;
    nc.batch = 8;
    nc.search = false;
    nc.pointwise = mode;
    train::Net net(m, nc, stream.get());
    EXPECT_EQ(net.describe().at("pointwise_matmuls").get<int>(), mode == "auto" ? unaligned : 0);
    net.forward(train::Pass::kTrain);
    half_losses.push_back(net.read_loss());
  }
  EXPECT_NEAR(half_losses[0], half_losses[1], 0.01 * std::fabs(half_losses[1]));  // fp16's rounding
}

// Grouped convolutions (the filter holds c / groups input channels per output channel) against a
// host reference in double, forward, in fp32 and fp16: depthwise (a group per channel, 5x5, stride
// 2; in our kernels and in cuDNN's) and two groups of three channels (3x3, stride 1; cuDNN's).
TEST(TrainGpu, GroupedConvolutionMatchesAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  struct Case {
    int c, k, groups, kernel, stride;
  };
  for (const Case cs : {Case{8, 8, 8, 5, 2}, Case{6, 4, 2, 3, 1}}) {
    train::Builder b("grouped", 1, {cs.c, 9, 9});
    const int conv =
        b.conv("conv", 0, cs.k, cs.kernel, cs.kernel, cs.stride, cs.kernel / 2, cs.kernel / 2, false, cs.groups);
    const train::Dims out = b.dims(conv);
    train::Model m = b.finish(conv);  // the loss reads the convolution's output as logits: inference stops there
    m.classes = static_cast<int>(out.elements());
    for (const compute::Precision prec : {compute::Precision::kFp32, compute::Precision::kFp16})
      for (const std::string depthwise : {"ours", "cudnn"}) {
        SCOPED_TRACE("groups " + std::to_string(cs.groups) + (prec == compute::Precision::kFp16 ? ", fp16" : ", fp32") +
                     ", depthwise " + depthwise);
        train::NetConfig nc;
        nc.precision = prec;
        nc.batch = 2;
        nc.training = false;
        nc.search = false;
        nc.depthwise = depthwise;
        train::Net net(m, nc, s);
        EXPECT_EQ(net.describe().at("depthwise_kernels").get<int>(), cs.groups == cs.c && depthwise == "ours" ? 1 : 0);
        net.forward(train::Pass::kInfer);
        const train::DType t = net.compute_type();
        auto fetch = [&](const void* p, std::size_t n, train::DType type) {
          gpu::DeviceBuffer tmp(n * static_cast<std::size_t>(gpu::dtype_bytes(type)));
          CUDA_CHECK(cudaMemcpyAsync(tmp.get(), p, tmp.bytes(), cudaMemcpyDeviceToDevice, s));
          return download_as(tmp, type, n, s);
        };
        const std::size_t nx = 2u * static_cast<std::size_t>(cs.c) * 81,
                          ny = 2u * static_cast<std::size_t>(out.elements());
        const std::size_t nw = static_cast<std::size_t>(m.param_slots);
        const std::vector<float> x = fetch(net.images(), nx, t), y = fetch(net.logits(), ny, t);
        std::vector<float> w = fetch(net.master(), nw, train::DType::kF32);
        if (t != train::DType::kF32) w = download_as(upload_as(w, t, s), t, nw, s);  // the compute copy's rounding
        const int cg = cs.c / cs.groups, kg = cs.k / cs.groups, pad = cs.kernel / 2;
        for (int img = 0; img < 2; ++img)
          for (int oy = 0; oy < out.h; ++oy)
            for (int ox = 0; ox < out.w; ++ox)
              for (int k = 0; k < cs.k; ++k) {
                double want = 0, scale = 0;
                const int g = k / kg;
                for (int ky = 0; ky < cs.kernel; ++ky)
                  for (int kx = 0; kx < cs.kernel; ++kx) {
                    const int iy = oy * cs.stride - pad + ky, ix = ox * cs.stride - pad + kx;
                    if (iy < 0 || iy >= 9 || ix < 0 || ix >= 9) continue;
                    for (int j = 0; j < cg; ++j) {
                      // NHWC activations, KRSC filters (the filter's channels: its group's).
                      const double xv = x[((static_cast<std::size_t>(img) * 9 + iy) * 9 + ix) * cs.c + g * cg + j];
                      const double wv = w[((static_cast<std::size_t>(k) * cs.kernel + ky) * cs.kernel + kx) * cg + j];
                      want += xv * wv;
                      scale += std::fabs(xv * wv);
                    }
                  }
                const std::size_t o = ((static_cast<std::size_t>(img) * out.h + oy) * out.w + ox) * cs.k + k;
                const double tol = (prec == compute::Precision::kFp16 ? 2e-3 : 1e-5) * std::max(scale, 1e-3);
                ASSERT_NEAR(y[o], want, tol) << "image " << img << " at " << oy << "," << ox << " channel " << k;
              }
      }
  }
}

// What `dump` writes for a PyTorch peer: the starting weights as the net holds them, the batch,
// the labels, and a model.json whose layer table places every parameter; sizes as the model says.
TEST(TrainGpu, DumpWritesTheStartingStateForAPeer) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const train::Model m = train::build_model("tiny-nasnet");
  train::NetConfig nc;
  nc.precision = compute::Precision::kFp16;
  nc.batch = 4;
  nc.search = false;
  train::Net net(m, nc, stream.get());
  const train::DumpStart start = train::dump_start(net);
  char tmpl[] = "/tmp/scalebench-dump-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = std::filesystem::path(tmpl) / "fp16-b4";
  EXPECT_TRUE(train::dump_gradients(net, true).empty());  // 16-bit gradients are not written
  train::write_dump(dir.string(), net, start, {2.5, 2.25}, {}, {});
  EXPECT_FALSE(std::filesystem::exists(dir / "grads0.f32"));
  EXPECT_EQ(std::filesystem::file_size(dir / "weights.f32"), static_cast<std::uintmax_t>(m.param_slots) * 4);
  EXPECT_EQ(std::filesystem::file_size(dir / "images.bin"), 4u * 3 * 16 * 16 * 2);  // fp16, NHWC
  EXPECT_EQ(std::filesystem::file_size(dir / "labels.i32"), 4u * 4);
  std::ifstream in(dir / "model.json");
  const Json meta = Json::parse(in);
  EXPECT_EQ(meta.at("model"), "tiny-nasnet");
  EXPECT_EQ(meta.at("images").at("dtype"), "float16");
  EXPECT_EQ(meta.at("losses"), (Json{2.5, 2.25}));
  // Each layer's parameters from its aligned offset, the gaps between them zero.
  long long covered = 0, end = 0;
  std::vector<bool> owned(static_cast<std::size_t>(m.param_slots), false);
  for (const Json& l : meta.at("layers")) {
    const long long at = l.at("offset").get<long long>(), n = l.at("params").get<long long>();
    EXPECT_EQ(at % train::kParamAlign, 0) << l.dump();
    EXPECT_GE(at, end) << l.dump();
    std::fill(owned.begin() + at, owned.begin() + at + n, true);
    covered += n, end = at + n;
  }
  EXPECT_EQ(covered, m.param_count);
  EXPECT_EQ(meta.at("weights").at("count").get<long long>(), m.param_slots);
  EXPECT_EQ(meta.at("weights").at("parameters").get<long long>(), m.param_count);
  std::vector<float> w(static_cast<std::size_t>(m.param_slots));
  std::ifstream(dir / "weights.f32", std::ios::binary)
      .read(reinterpret_cast<char*>(w.data()), static_cast<std::streamsize>(w.size() * 4));
  EXPECT_EQ(w, start.weights);
  for (std::size_t k = 0; k < w.size(); ++k)
    if (!owned[k]) {
      EXPECT_EQ(w[k], 0.0f) << "gap at " << k;
    }

  // In fp32 the gradients go beside the weights, in their layout.
  nc.precision = compute::Precision::kFp32;
  train::Net net32(m, nc, stream.get());
  const std::vector<float> g = train::dump_gradients(net32, true);
  ASSERT_EQ(g.size(), static_cast<std::size_t>(m.param_slots));
  EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](float x) { return x != 0; }));
  EXPECT_EQ(train::dump_gradients(net32, false), g);  // what the pass left
  const std::filesystem::path dir32 = std::filesystem::path(tmpl) / "fp32-b4";
  train::write_dump(dir32.string(), net32, train::dump_start(net32), {2.5}, g, g);
  EXPECT_EQ(std::filesystem::file_size(dir32 / "grads0.f32"), static_cast<std::uintmax_t>(m.param_slots) * 4);
  EXPECT_EQ(std::filesystem::file_size(dir32 / "grads1.f32"), static_cast<std::uintmax_t>(m.param_slots) * 4);
  EXPECT_EQ(Json::parse(std::ifstream(dir32 / "model.json")).at("gradients").at("files"),
            (Json{"grads0.f32", "grads1.f32"}));
  std::filesystem::remove_all(tmpl);
}

// One rank's shard of the copy-engine all-reduce: the sum of every rank's copy, added in fp32 and
// rounded once (2048 + 1 + 1 in fp16 is 2050, where adding in fp16 gives 2048), on the 16-byte
// path and, from an odd element, the one-element path, with a tail that fills no vector. The
// record's all-reduce check must see a missing rank.
TEST(TrainGpu, SumShardsRoundsOnceAndTheAllReduceCheckSeesAMissingRank) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  for (train::DType t : {train::DType::kF32, train::DType::kF16, train::DType::kBf16}) {
    const long long n = 1000 + 3;  // not a whole number of 16-byte vectors
    const auto eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
    std::vector<gpu::DeviceBuffer> ranks;
    for (int r = 0; r < 3; ++r) {
      ranks.emplace_back(static_cast<std::size_t>(n + 1) * eb);
      train::fill_allreduce_pattern(ranks.back().get(), t, n + 1, r, 2, s);
    }
    for (long long from : {0LL, 1LL}) {  // aligned, then one element in
      train::ShardSources src;
      for (auto& b : ranks) src.p[src.count++] = b.get() + static_cast<std::size_t>(from) * eb;
      gpu::DeviceBuffer out(static_cast<std::size_t>(n + 1) * eb), wrong(2 * sizeof(unsigned long long));
      CUDA_CHECK(cudaMemsetAsync(wrong.get(), 0, wrong.bytes(), s));
      // The pattern starts at element 0: sum the whole buffer through the path `from` selects.
      train::sum_shards(out.get() + static_cast<std::size_t>(from) * eb, src, t, n + 1 - from, s);
      if (from == 1) CUDA_CHECK(cudaMemcpyAsync(out.get(), ranks[0].get(), eb, cudaMemcpyDeviceToDevice, s));
      auto* counts = reinterpret_cast<unsigned long long*>(wrong.get());
      if (from == 0) {
        train::count_allreduce_errors(out.get(), t, n + 1, 3, 2, counts, s);
        train::count_allreduce_errors(out.get(), t, n + 1, 2, 2, counts + 1, s);
      } else {  // element 0 is rank 0's alone here: check the rest
        train::count_allreduce_errors(out.get(), t, n + 1, 3, 2, counts, s);
      }
      unsigned long long got[2] = {};
      CUDA_CHECK(cudaMemcpyAsync(got, wrong.get(), sizeof got, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      EXPECT_LE(got[0], static_cast<unsigned long long>(from)) << "type " << static_cast<int>(t) << " from " << from;
      if (from == 0) {
        EXPECT_GT(got[1], static_cast<unsigned long long>(n / 2)) << "a rank left out must show";
      }
    }
    // Rounded once, after adding in fp32.
    gpu::DeviceBuffer a = upload_as({2048, 2048}, t, s), b = upload_as({1, -1}, t, s), c = upload_as({1, -1}, t, s);
    train::ShardSources src;
    src.p[0] = a.get(), src.p[1] = b.get(), src.p[2] = c.get(), src.count = 3;
    train::sum_shards(a.get(), src, t, 2, s);  // in place, as an owner sums its own shard
    // 2050 and 2046 are exact in fp16; bf16 rounds both to 2048.
    const std::vector<float> sums = download_as(a, t, 2, s);
    const float want_hi = t == train::DType::kBf16 ? 2048.0f : 2050.0f,
                want_lo = t == train::DType::kBf16 ? 2048.0f : 2046.0f;
    EXPECT_EQ(sums[0], want_hi) << "type " << static_cast<int>(t);
    EXPECT_EQ(sums[1], want_lo) << "type " << static_cast<int>(t);
  }
}
#endif
