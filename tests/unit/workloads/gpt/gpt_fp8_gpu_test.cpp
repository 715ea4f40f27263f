// FP8 GEMMs on the GPU (workloads/gpt/fp8_linear.*): with the scales delayed scaling chooses, the
// three GEMMs of a linear layer match the product of the same bf16 inputs within FP8's rounding;
// the GPT-2 step in FP8 trains as the bf16 one does. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/fp8_kernels.cuh"
#include "workloads/gpt/fp8_linear.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/step_core.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {

// bf16 values of N(0, std), as the host sees them after rounding.
std::vector<float> bf16_normal(std::size_t n, float std, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, std);
  std::vector<float> v(n);
  for (float& x : v) x = __bfloat162float(__float2bfloat16(d(rng)));
  return v;
}

struct Device {
  explicit Device(std::size_t n) : buf(2 * n) {}
  gpu::DeviceBuffer buf;
  bf16* get() const { return reinterpret_cast<bf16*>(buf.get()); }
};

Device upload(const std::vector<float>& v, cudaStream_t s) {
  std::vector<bf16> raw(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) raw[i] = __float2bfloat16(v[i]);
  Device d(v.size());
  CUDA_CHECK(cudaMemcpyAsync(d.get(), raw.data(), 2 * raw.size(), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return d;
}

std::vector<float> download(const bf16* d, std::size_t n, cudaStream_t s) {
  std::vector<bf16> raw(n);
  CUDA_CHECK(cudaMemcpyAsync(raw.data(), d, 2 * n, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = __bfloat162float(raw[i]);
  return v;
}

// ||got - want|| / ||want|| over all elements.
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

// An Fp8Linear of the given sites over `rows`, with its arena, cuBLASLt handle and workspace.
struct Fp8Rig {
  Fp8Rig(std::vector<Fp8Shape> sites, int rows, cudaStream_t s) : fp8(std::move(sites), rows, DelayedScaling{4, 0}) {
    Planner count;
    fp8.plan(count);
    arena = gpu::DeviceBuffer(count.size);
    Planner place{arena.get()};
    fp8.plan(place);
    fp8.lt = lt.get();
    fp8.stream = s;
    fp8.workspace = workspace.get();
    fp8.workspace_bytes = kWorkspaceBytes;
    fp8.init(s);
  }
  Fp8Linear fp8;
  gpu::DeviceBuffer arena, workspace{kWorkspaceBytes};
  gemm::LtHandle lt;
};

// GELU's tanh form and its derivative, as the step's kernels and cuBLASLt's epilogues have it.
double gelu(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double gelu_grad(double x) {
  const double k = std::sqrt(2.0 / M_PI), t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
}

}  // namespace

// One linear layer y = x W^T + b over 256 rows, 512 in, 384 out: its forward GEMM (E4M3 x E4M3),
// weight gradient (E4M3 x E5M2, both operands transposed by the cast kernel) and input gradient
// (W transposed) against the fp64 products of the same bf16 values, which the bf16 GEMMs compute up
// to their output's rounding (2^-9). The inputs are as small as a network's are (x ~ 1e-2, dy ~
// 1e-6): at the initial scale 1, E5M2 flushes such a dy to zero; after one step's amax the scales
// put each tensor's largest value at the format's largest.
//
// Tolerance: rounding to 3 mantissa bits (E4M3) leaves a relative error uniform within half a
// step, 2^-4 of the value's power of two: RMS about 2^-3 / sqrt(12) x ln 2 = 2.6%; E5M2 (2 bits)
// 5.2%. A product of two rounded values carries both (E4M3 x E4M3 3.7%, E4M3 x E5M2 5.8% RMS), and
// over a sum of independent terms the error relative to the result's norm stays that size. Allowed:
// 6% and 9%, 1.6 x the expected, while a wrong scale (one not applied, or applied twice) is off by
// orders of magnitude.
TEST(GptFp8Gpu, ScaledGemmsMatchTheBf16ProductWithinFp8Error) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const int rows = 256, in = 512, out = 384;
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const std::vector<float> x = bf16_normal(static_cast<std::size_t>(rows) * in, 1e-2f, 1),
                           w = bf16_normal(static_cast<std::size_t>(out) * in, 0.02f, 2),
                           bias = bf16_normal(out, 1e-3f, 3),
                           dy = bf16_normal(static_cast<std::size_t>(rows) * out, 1e-6f, 4);
  // fp64 references: y = x W^T + b, dW = dy^T x, dx = dy W, db = the sum of dy's rows.
  std::vector<double> y_ref(static_cast<std::size_t>(rows) * out), dw_ref(static_cast<std::size_t>(out) * in, 0.0),
      dx_ref(static_cast<std::size_t>(rows) * in, 0.0), db_ref(out, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = bias[o];
      for (int i = 0; i < in; ++i) acc += static_cast<double>(x[r * in + i]) * w[o * in + i];
      y_ref[r * out + o] = acc;
      const double g = dy[r * out + o];
      db_ref[o] += g;
      for (int i = 0; i < in; ++i) {
        dw_ref[o * in + i] += g * x[r * in + i];
        dx_ref[r * in + i] += g * w[o * in + i];
      }
    }

  Device dx_d(x.size()), dw_d(w.size()), y_d(y_ref.size()), db_d(out);
  const Device x_d = upload(x, s), w_d = upload(w, s), b_d = upload(bias, s), dy_d = upload(dy, s);
  Fp8Rig rig({{in, out}}, rows, s);
  Fp8Linear& fp8 = rig.fp8;

  auto run_all = [&] {
    fp8.forward(0, y_d.get(), x_d.get(), w_d.get(), b_d.get(), nullptr);
    fp8.weight_grad(0, dw_d.get(), db_d.get(), dy_d.get(), x_d.get(), false);
    fp8.input_grad(0, dx_d.get(), dy_d.get(), w_d.get());
  };
  // First step at scale 1: dy (1e-6) is below E5M2's smallest value (2^-16 = 1.5e-5), so both
  // gradient GEMMs come out (nearly) zero.
  run_all();
  EXPECT_GT(relative_error(download(dw_d.get(), w.size(), s), dw_ref), 0.9);
  EXPECT_GT(relative_error(download(dx_d.get(), x.size(), s), dx_ref), 0.9);
  // The step's amax sets the scales: format max / max |tensor| (margin 0).
  fp8.update_scales(s);
  const std::vector<float> scales = fp8.scales(0, s);
  EXPECT_FLOAT_EQ(scales[0], kE4M3Max / max_abs(x));
  EXPECT_FLOAT_EQ(scales[1], kE4M3Max / max_abs(w));
  EXPECT_FLOAT_EQ(scales[2], kE5M2Max / max_abs(dy));

  run_all();
  const double e_y = relative_error(download(y_d.get(), y_ref.size(), s), y_ref);
  const double e_dw = relative_error(download(dw_d.get(), w.size(), s), dw_ref);
  const double e_dx = relative_error(download(dx_d.get(), x.size(), s), dx_ref);
  // The bias gradient is summed from the bf16 dy: bf16's rounding of the result only.
  const double e_db = relative_error(download(db_d.get(), out, s), db_ref);
  std::printf("relative errors: forward %.4f, weight grad %.4f, input grad %.4f, bias grad %.5f\n", e_y, e_dw, e_dx,
              e_db);
  EXPECT_LT(e_y, 0.06);
  EXPECT_LT(e_dw, 0.09);
  EXPECT_LT(e_dx, 0.09);
  EXPECT_LT(e_db, 0.01);
  // And FP8 is really in the loop: exact bf16 products would be within bf16's 2^-9.
  EXPECT_GT(e_y, 0.005);

  // Accumulating into dW adds the same product again.
  fp8.weight_grad(0, dw_d.get(), db_d.get(), dy_d.get(), x_d.get(), true);
  std::vector<double> twice(dw_ref), db_twice(db_ref);
  for (double& v : twice) v *= 2;
  for (double& v : db_twice) v *= 2;
  EXPECT_LT(relative_error(download(dw_d.get(), w.size(), s), twice), 0.09);
  EXPECT_LT(relative_error(download(db_d.get(), out, s), db_twice), 0.01);
}

// GELU in the FP8 GEMMs' epilogues, as the MLP has it: the up projection (site 0) writes gelu(y)
// and keeps y; the down projection's input gradient (site 1) multiplies dy W by gelu'(y). Against
// fp64 from the same bf16 values, within FP8's error as above (GELU in cuBLASLt's epilogue, or
// in a kernel where cuBLASLt refuses it; GELU' in a kernel after the GEMM).
TEST(GptFp8Gpu, GeluEpiloguesMatchTheFp64ReferenceWithinFp8Error) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const int rows = 256, in = 512, hidden = 384, out = 256;
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const std::vector<float> x = bf16_normal(static_cast<std::size_t>(rows) * in, 1.f, 11),
                           w0 = bf16_normal(static_cast<std::size_t>(hidden) * in, 0.05f, 12),
                           b0 = bf16_normal(hidden, 0.1f, 13),
                           w1 = bf16_normal(static_cast<std::size_t>(out) * hidden, 0.05f, 14),
                           dy = bf16_normal(static_cast<std::size_t>(rows) * out, 1e-3f, 15);
  std::vector<double> y_ref(static_cast<std::size_t>(rows) * hidden), gelu_ref(y_ref.size()), dx_ref(y_ref.size());
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < hidden; ++h) {
      double acc = b0[h], back = 0;
      for (int i = 0; i < in; ++i) acc += static_cast<double>(x[r * in + i]) * w0[h * in + i];
      for (int o = 0; o < out; ++o) back += static_cast<double>(dy[r * out + o]) * w1[o * hidden + h];
      const std::size_t at = static_cast<std::size_t>(r) * hidden + h;
      y_ref[at] = acc;
      gelu_ref[at] = gelu(acc);
      dx_ref[at] = back * gelu_grad(acc);
    }

  const Device x_d = upload(x, s), w0_d = upload(w0, s), b0_d = upload(b0, s), w1_d = upload(w1, s),
               dy_d = upload(dy, s);
  Device y_d(y_ref.size()), gelu_d(y_ref.size()), dx_d(y_ref.size());
  Fp8Rig rig({{in, hidden}, {hidden, out}}, rows, s);
  auto run_both = [&] {
    rig.fp8.forward(0, y_d.get(), x_d.get(), w0_d.get(), b0_d.get(), nullptr, gelu_d.get());
    rig.fp8.input_grad(1, dx_d.get(), dy_d.get(), w1_d.get(), y_d.get());
  };
  run_both();  // scale 1, then the scales from this step's amax
  rig.fp8.update_scales(s);
  run_both();
  const double e_y = relative_error(download(y_d.get(), y_ref.size(), s), y_ref);
  const double e_gelu = relative_error(download(gelu_d.get(), y_ref.size(), s), gelu_ref);
  const double e_dx = relative_error(download(dx_d.get(), y_ref.size(), s), dx_ref);
  std::printf("relative errors: GELU's input %.4f, GELU %.4f, input grad through GELU' %.4f\n", e_y, e_gelu, e_dx);
  EXPECT_LT(e_y, 0.06);
  EXPECT_LT(e_gelu, 0.06);
  EXPECT_LT(e_dx, 0.09);
  EXPECT_GT(e_y, 0.005);  // FP8 in the loop
}

// The GPT-2 step with its blocks' GEMMs in FP8 trains the tiny model on its fixed batch as the bf16
// step does: 40 steps from the same weights, the loss falls as far (within 5% of bf16's), and the
// scales have left their initial 1.
// The up projection's output gradient through GELU' cast in the pass that applies GELU': the same
// bytes in both layouts, the same amax and the same bias-gradient sums as GELU' stored in bf16 and
// then cast. 192 x 320: tiles cut at both edges.
TEST(GptFp8Gpu, GeluGradientCastInOnePassIsTheTwoPasses) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const int rows = 192, cols = 320;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const Device d = upload(bf16_normal(n, 1e-2f, 21), s), apart = upload(bf16_normal(n, 1e-2f, 21), s),
               in = upload(bf16_normal(n, 1.5f, 22), s);
  const std::size_t sums = static_cast<std::size_t>(cast_column_sums_size(rows, cols));
  gpu::DeviceBuffer scale(sizeof(float)), amax(2 * sizeof(float)), column_sums(2 * sums * sizeof(float)), bytes(4 * n);
  const float sc = 300.f;
  CUDA_CHECK(cudaMemcpyAsync(scale.get(), &sc, sizeof(float), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemsetAsync(amax.get(), 0, 2 * sizeof(float), s));
  auto* f = reinterpret_cast<float*>(amax.get());
  auto* cs = reinterpret_cast<float*>(column_sums.get());
  const auto* scale_d = reinterpret_cast<const float*>(scale.get());
  gelu_backward(apart.get(), in.get(), static_cast<long long>(n), s);
  cast_fp8(apart.get(), rows, cols, Fp8Format::kE5M2, scale_d, bytes.get(), bytes.get() + n, f, cs, s);
  cast_fp8_gelu_grad(d.get(), in.get(), rows, cols, Fp8Format::kE5M2, scale_d, bytes.get() + 2 * n, bytes.get() + 3 * n,
                     f + 1, cs + sums, s);
  std::vector<unsigned char> got(4 * n);
  std::vector<float> amaxes(2), sums_got(2 * sums);
  CUDA_CHECK(cudaMemcpyAsync(got.data(), bytes.get(), got.size(), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(amaxes.data(), f, 2 * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(sums_got.data(), cs, sums_got.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + 2 * n, got.begin() + 2 * n)) << "FP8 bytes differ";
  EXPECT_EQ(amaxes[0], amaxes[1]);
  EXPECT_GT(amaxes[0], 1e-3f);
  EXPECT_TRUE(std::equal(sums_got.begin(), sums_got.begin() + sums, sums_got.begin() + sums)) << "column sums differ";
  EXPECT_GT(std::count_if(got.begin(), got.begin() + n, [](unsigned char b) { return (b & 0x7f) != 0; }), n / 2);
}

// GELU's output written in FP8 by the up projection's GEMM for the down projection (gelu_site):
// the down projection's output, its weight gradient (from the transpose of those bytes) and the
// scale its x gets from the GEMM's amax agree with GELU's output written in bf16 and cast. They
// differ only where a value rounds differently through bf16 first.
TEST(GptFp8Gpu, GeluOutputInFp8FromTheGemmIsTheCastOfItsBf16Output) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const int rows = 256, in = 512, hidden = 384, out = 256;
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const Device x = upload(bf16_normal(static_cast<std::size_t>(rows) * in, 1.f, 31), s),
               w0 = upload(bf16_normal(static_cast<std::size_t>(hidden) * in, 0.05f, 32), s),
               b0 = upload(bf16_normal(hidden, 0.1f, 33), s),
               w1 = upload(bf16_normal(static_cast<std::size_t>(out) * hidden, 0.05f, 34), s),
               dy = upload(bf16_normal(static_cast<std::size_t>(rows) * out, 1e-3f, 35), s);
  const std::size_t nh = static_cast<std::size_t>(rows) * hidden, no = static_cast<std::size_t>(rows) * out,
                    nw = static_cast<std::size_t>(out) * hidden;
  std::vector<float> results[2], scales[2];
  for (int fused = 0; fused < 2; ++fused) {
    Fp8Rig rig({{in, hidden}, {hidden, out}}, rows, s);
    Device y(nh), gelu_out(nh), z(no), dw(nw);
    for (int step = 0; step < 2; ++step) {  // scale 1, then the scales of the first step's amax
      rig.fp8.forward(0, y.get(), x.get(), w0.get(), b0.get(), nullptr, gelu_out.get(), fused ? 1 : -1);
      rig.fp8.forward(1, z.get(), gelu_out.get(), w1.get(), nullptr, nullptr);
      rig.fp8.weight_grad(1, dw.get(), nullptr, dy.get(), gelu_out.get(), false);
      rig.fp8.update_scales(s);
    }
    results[fused] = download(z.get(), no, s);
    const std::vector<float> g = download(dw.get(), nw, s);
    results[fused].insert(results[fused].end(), g.begin(), g.end());
    scales[fused] = rig.fp8.scales(1, s);
  }
  std::vector<double> want(results[0].begin(), results[0].end());
  const double e = relative_error(results[1], want);
  std::printf("GELU's output from the GEMM in FP8 against bf16 then cast: relative difference %.5f; x scale %g vs %g\n",
              e, scales[1][0], scales[0][0]);
  EXPECT_LT(e, 0.02);
  EXPECT_NEAR(scales[1][0], scales[0][0], 0.01 * scales[0][0]);
  EXPECT_GT(scales[0][0], 4.f);  // the amax was taken: scale 1 would leave these values far below FP8's range
}

TEST(GptFp8Gpu, TinyModelTrainsAsBf16Does) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-tiny");
  const int B = 4, T = 64;
  gpu::Stream s;
  GptModel bf(m, B, T, 7, s.get(), Attention::kCudnn);
  GptModel f8(m, B, T, 7, s.get(), Attention::kCudnn, {}, false, Precision{true, {16, 0}});
  float first_bf = 0, first_f8 = 0;
  for (int step = 0; step < 40; ++step) {
    bf.step(1, Hyper{1e-3f});
    f8.step(1, Hyper{1e-3f});
    if (step == 0) {
      first_bf = bf.loss();
      first_f8 = f8.loss();
    }
  }
  // The first forward pass: the FP8 GEMMs at scale 1 on weights of 0.02, already close.
  EXPECT_NEAR(first_f8, first_bf, 0.02 * first_bf);
  const float last_bf = bf.loss(), last_f8 = f8.loss();
  std::printf("loss: bf16 %.4f -> %.4f, fp8 %.4f -> %.4f\n", first_bf, last_bf, first_f8, last_f8);
  EXPECT_LT(last_bf, 0.8f * first_bf);
  EXPECT_NEAR(last_f8, last_bf, 0.05 * last_bf);
  for (int site = 0; site < 4 * m.layers; ++site)
    for (float scale : f8.fp8_scales(site)) EXPECT_NE(scale, 1.f) << "site " << site;
  EXPECT_TRUE(bf.fp8_scales(0).empty());
}

// The Llama step in FP8: one 8B-shaped block (width 4096, 32 query and 8 KV heads, SwiGLU 14336)
// with a 512-token vocabulary, as GptGpu.Llama8bShapedBlockTrains: 8 steps on one batch from the
// same weights, the loss falls as bf16's does: its mean over the 8 steps within 5% of bf16's. Not
// the last loss alone: memorising one batch at lr 1e-3, the last step's loss differs run to run
// in bf16 itself (0.78-0.83 in three runs on H200s) and in fp8 more (0.63-0.92), while the curve
// as a whole, which a broken FP8 path (gradients flushed to zero, a scale applied twice) would
// leave near its start, agrees.
TEST(GptFp8Gpu, Llama8bShapedBlockTrainsAsBf16Does) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  ModelShape m = model_shape("llama3-8b", 1);
  m.vocab = m.padded_vocab = 512;
  gpu::Stream s;
  std::vector<float> losses[2];
  for (bool fp8 : {false, true}) {
    GptModel model(m, 1, 512, 13, s.get(), Attention::kCudnn, {}, false, Precision{fp8, {16, 0}});
    for (int i = 0; i < 8; ++i) {
      model.step(1, Hyper{1e-3f});
      losses[fp8].push_back(model.loss());
    }
  }
  auto mean = [](const std::vector<float>& v) {
    double sum = 0;
    for (float x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  const double mean_bf = mean(losses[0]), mean_f8 = mean(losses[1]);
  std::printf("llama 8B-shaped block: bf16 %.4f -> %.4f (mean %.4f), fp8 %.4f -> %.4f (mean %.4f)\n", losses[0][0],
              losses[0].back(), mean_bf, losses[1][0], losses[1].back(), mean_f8);
  EXPECT_LT(losses[0].back(), 0.5f * losses[0][0]);
  EXPECT_LT(losses[1].back(), 0.5f * losses[1][0]);
  EXPECT_NEAR(mean_f8, mean_bf, 0.05 * mean_bf);
}

// cuBLASLt's FP8 GEMMs want every dimension a multiple of 16: llama-tiny's MLP of 172 is refused,
// naming the field, before anything runs.
TEST(GptFp8Gpu, WidthsNotMultiplesOf16AreAnErrorNamingPrecision) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  try {
    GptModel f8(model_shape("llama-tiny"), 2, 64, 7, s.get(), Attention::kCudnn, {}, false, Precision{true, {}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("precision: fp8 needs", 0), 0u) << e.what();
  }
}

#endif  // SCALEBENCH_HAVE_CUDA
