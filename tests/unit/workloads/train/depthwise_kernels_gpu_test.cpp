// Our depthwise convolution kernels (depthwise_kernels.cu) against host references in double:
// forward, backward data (written and added) and backward filter, in fp32, fp16 and bf16, for 3x3,
// 5x5 and 7x7 filters at strides 1 and 2, channel counts that take every vector width (11: one
// channel a thread; 22 and 44: 4 and 8 bytes in 16 bits; 32: 16 bytes; 176: two blocks' channel
// chunks), tiny images (4x4, 7x7) and a larger one (28x28, batch 8). Weights and their gradient lie
// one element past an aligned address, as in the net's flat buffers; in two cases the activations
// do too. Skipped where no GPU is visible (but for the shapes refused before any launch).
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/gpu_available.hpp"
#include "tests/unit/workloads/train/device_values.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/train/train_kernels.cuh"

using namespace scalebench;

namespace {
using scalebench::test_support::download_as;
using scalebench::test_support::have_gpu;
using scalebench::test_support::upload_as;

struct DwCase {
  int n, h, c, k, stride;
  bool odd_activations = false;  // x, y, dy and dx one element past an aligned address
};

std::vector<DwCase> cases() {
  std::vector<DwCase> out;
  for (const int k : {3, 5, 7})
    for (const int stride : {1, 2}) {
      for (const int h : {4, 7})
        for (const int c : {11, 32}) out.push_back({2, h, c, k, stride});
      for (const int c : {22, 44, 176}) out.push_back({2, 7, c, k, stride});
      out.push_back({8, 28, 32, k, stride});
    }
  out.push_back({2, 7, 32, 5, 2, true});
  out.push_back({2, 7, 11, 3, 1, true});
  return out;
}

// NASNet's padding: k / 2 on every side.
train::PoolShape shape_of(const DwCase& d) {
  const int pad = d.k / 2, o = (d.h + 2 * pad - d.k) / d.stride + 1;
  return train::PoolShape{d.n, d.h, d.h, d.c, o, o, d.k, d.stride, pad};
}

std::string describe(const DwCase& d, train::DType t) {
  return std::string(gpu::dtype_name(t)) + ", " + std::to_string(d.n) + " x " + std::to_string(d.h) + "x" +
         std::to_string(d.h) + " x " + std::to_string(d.c) + " channels, " + std::to_string(d.k) + "x" +
         std::to_string(d.k) + " stride " + std::to_string(d.stride) +
         (d.odd_activations ? ", activations at an odd offset" : "");
}

// The products of 16-bit values are exact in fp32: what differs from the reference is the fp32
// sums' rounding, bounded by a share of `scale` (the sum of the terms' magnitudes), and the result's
// one rounding to t (an ulp of the value at most).
double tolerance(train::DType t, double want, double scale) {
  const double ulp = t == train::DType::kF32 ? 0.0 : t == train::DType::kF16 ? 1e-3 : 8e-3;
  return ulp * std::fabs(want) + 1e-5 * scale + 1e-6;
}

// Values of v rounded to t (what the kernels read after upload_as).
std::vector<float> rounded(const std::vector<float>& v, train::DType t, cudaStream_t s) {
  return download_as(upload_as(v, t, s), t, v.size(), s);
}

std::vector<float> uniform(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A device copy of v in type t, `offset` elements into its buffer (`fill` before and after it).
struct Placed {
  gpu::DeviceBuffer buf;
  std::size_t offset = 0, n = 0;
  train::DType t = train::DType::kF32;
  void* get() const { return static_cast<std::byte*>(buf.get()) + offset * gpu::dtype_bytes(t); }
  std::vector<float> all(cudaStream_t s) const { return download_as(buf, t, offset + n + 1, s); }
  std::vector<float> values(cudaStream_t s) const {
    const std::vector<float> a = all(s);
    return std::vector<float>(a.begin() + static_cast<std::ptrdiff_t>(offset),
                              a.begin() + static_cast<std::ptrdiff_t>(offset + n));
  }
};
Placed place(const std::vector<float>& v, std::size_t offset, train::DType t, cudaStream_t s, float fill = 0.0f) {
  std::vector<float> padded(offset, fill);
  padded.insert(padded.end(), v.begin(), v.end());
  padded.push_back(fill);
  return Placed{upload_as(padded, t, s), offset, v.size(), t};
}

std::size_t at(const train::PoolShape& p, int img, int y, int x, int h, int w, int c) {
  return ((static_cast<std::size_t>(img) * h + y) * w + x) * p.c + c;
}

// Calls f(output index, input index, tap index) for every output, tap and channel whose tap lies
// inside the input: the one loop every reference below is a sum over.
template <typename F>
void for_each_tap(const train::PoolShape& p, F&& f) {
  for (int img = 0; img < p.n; ++img)
    for (int oy = 0; oy < p.oh; ++oy)
      for (int ox = 0; ox < p.ow; ++ox)
        for (int r = 0; r < p.k; ++r)
          for (int s = 0; s < p.k; ++s) {
            const int iy = oy * p.stride - p.pad + r, ix = ox * p.stride - p.pad + s;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
            for (int c = 0; c < p.c; ++c)
              f(at(p, img, oy, ox, p.oh, p.ow, c), at(p, img, iy, ix, p.h, p.w, c),
                (static_cast<std::size_t>(c) * p.k + r) * p.k + s);
          }
}

struct Data {
  train::PoolShape p;
  std::vector<float> x, w, dy;  // rounded to the type under test
  std::size_t nx = 0, ny = 0, nw = 0;
};
Data make_data(const DwCase& d, train::DType t, cudaStream_t s, unsigned seed) {
  Data out;
  out.p = shape_of(d);
  const train::PoolShape& p = out.p;
  out.nx = static_cast<std::size_t>(p.n) * p.h * p.w * p.c;
  out.ny = static_cast<std::size_t>(p.n) * p.oh * p.ow * p.c;
  out.nw = static_cast<std::size_t>(p.c) * p.k * p.k;
  std::mt19937 rng(seed);
  out.x = rounded(uniform(out.nx, rng), t, s);
  out.w = rounded(uniform(out.nw, rng), t, s);
  out.dy = rounded(uniform(out.ny, rng), t, s);
  return out;
}

constexpr train::DType kTypes[] = {train::DType::kF32, train::DType::kF16, train::DType::kBf16};
}  // namespace

// y = the window's sum of x times its channel's taps, zeros outside.
TEST(DepthwiseGpu, ForwardMatchesADoubleReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  for (const DwCase& d : cases())
    for (const train::DType t : kTypes) {
      SCOPED_TRACE(describe(d, t));
      const Data v = make_data(d, t, s, 17);
      const train::PoolShape& p = v.p;
      std::vector<double> want(v.ny, 0.0), scale(v.ny, 0.0);
      for_each_tap(p, [&](std::size_t o, std::size_t i, std::size_t tap) {
        want[o] += static_cast<double>(v.x[i]) * v.w[tap];
        scale[o] += std::fabs(static_cast<double>(v.x[i]) * v.w[tap]);
      });
      const std::size_t a = d.odd_activations ? 1 : 0;
      // y starts as 7s: an output left unwritten shows.
      const Placed x = place(v.x, a, t, s), w = place(v.w, 1, t, s), y = place(std::vector<float>(v.ny, 7.0f), a, t, s);
      train::depthwise_forward(x.get(), w.get(), y.get(), t, p, s);
      const std::vector<float> got = y.values(s);
      for (std::size_t o = 0; o < v.ny; ++o)
        ASSERT_NEAR(got[o], want[o], tolerance(t, want[o], scale[o])) << "y at " << o;
    }
}

// dx = the sum of dy times the tap that joined them, written, then added into what is there.
TEST(DepthwiseGpu, BackwardDataMatchesADoubleReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  for (const DwCase& d : cases())
    for (const train::DType t : kTypes) {
      SCOPED_TRACE(describe(d, t));
      const Data v = make_data(d, t, s, 23);
      const train::PoolShape& p = v.p;
      std::mt19937 rng(29);
      const std::vector<float> dx0 = rounded(uniform(v.nx, rng), t, s);
      std::vector<double> want(v.nx, 0.0), scale(v.nx, 0.0);
      for_each_tap(p, [&](std::size_t o, std::size_t i, std::size_t tap) {
        want[i] += static_cast<double>(v.dy[o]) * v.w[tap];
        scale[i] += std::fabs(static_cast<double>(v.dy[o]) * v.w[tap]);
      });
      const std::size_t a = d.odd_activations ? 1 : 0;
      const Placed dy = place(v.dy, a, t, s), w = place(v.w, 1, t, s);
      // Written over what was there (dx0), and added to it.
      const Placed dx = place(dx0, a, t, s), acc = place(dx0, a, t, s);
      train::depthwise_backward_data(dy.get(), w.get(), dx.get(), false, t, p, s);
      train::depthwise_backward_data(dy.get(), w.get(), acc.get(), true, t, p, s);
      const std::vector<float> got = dx.values(s), got_acc = acc.values(s);
      for (std::size_t i = 0; i < v.nx; ++i) {
        ASSERT_NEAR(got[i], want[i], tolerance(t, want[i], scale[i])) << "dx at " << i;
        const double sum = dx0[i] + want[i];
        ASSERT_NEAR(got_acc[i], sum, tolerance(t, sum, scale[i] + std::fabs(dx0[i]))) << "accumulated dx at " << i;
      }
    }
}

// dw = the sum over images and outputs of dy times the x under each tap, into a gradient one
// element past an aligned address whose neighbours stay as they were; the same bits on a second run.
TEST(DepthwiseGpu, BackwardFilterMatchesADoubleReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  for (const DwCase& d : cases())
    for (const train::DType t : kTypes) {
      SCOPED_TRACE(describe(d, t));
      const Data v = make_data(d, t, s, 31);
      const train::PoolShape& p = v.p;
      std::vector<double> want(v.nw, 0.0), scale(v.nw, 0.0);
      for_each_tap(p, [&](std::size_t o, std::size_t i, std::size_t tap) {
        want[tap] += static_cast<double>(v.dy[o]) * v.x[i];
        scale[tap] += std::fabs(static_cast<double>(v.dy[o]) * v.x[i]);
      });
      const std::size_t a = d.odd_activations ? 1 : 0;
      const Placed x = place(v.x, a, t, s), dy = place(v.dy, a, t, s);
      const Placed dw = place(std::vector<float>(v.nw, 0.0f), 1, t, s, 7.0f);
      gpu::DeviceBuffer work(train::depthwise_filter_work_bytes(p));
      train::depthwise_backward_filter(x.get(), dy.get(), dw.get(), t, p, work.get(), s);
      const std::vector<float> all = dw.all(s), got = dw.values(s);
      EXPECT_EQ(all.front(), 7.0f) << "the element before dw";
      EXPECT_EQ(all.back(), 7.0f) << "the element after dw";
      for (std::size_t i = 0; i < v.nw; ++i)
        ASSERT_NEAR(got[i], want[i], tolerance(t, want[i], scale[i]))
            << "dw at channel " << i / (p.k * p.k) << " tap " << i % (p.k * p.k);
      train::depthwise_backward_filter(x.get(), dy.get(), dw.get(), t, p, work.get(), s);
      EXPECT_EQ(dw.values(s), got) << "a second run's sums differ";
    }
}

// Only the kernel sizes and strides NASNet has; a shape whose output is not its windows' is refused before
// anything is launched (so this runs without a GPU too).
TEST(DepthwiseGpu, RefusesShapesItDoesNotTake) {
  EXPECT_TRUE(train::depthwise_supported(3, 1));
  EXPECT_TRUE(train::depthwise_supported(7, 2));
  EXPECT_FALSE(train::depthwise_supported(1, 1));
  EXPECT_FALSE(train::depthwise_supported(9, 1));
  EXPECT_FALSE(train::depthwise_supported(3, 3));
  const train::DType t = train::DType::kF32;
  const train::PoolShape nine{1, 4, 4, 8, 4, 4, 9, 1, 4}, wrong_output{1, 4, 4, 8, 3, 4, 3, 1, 1},
      stride3{1, 7, 7, 8, 3, 3, 3, 3, 1};
  EXPECT_THROW(train::depthwise_forward(nullptr, nullptr, nullptr, t, nine, nullptr), Error);
  EXPECT_THROW(train::depthwise_backward_data(nullptr, nullptr, nullptr, false, t, nine, nullptr), Error);
  EXPECT_THROW(train::depthwise_backward_filter(nullptr, nullptr, nullptr, t, nine, nullptr, nullptr), Error);
  EXPECT_THROW(train::depthwise_forward(nullptr, nullptr, nullptr, t, wrong_output, nullptr), Error);
  EXPECT_THROW(train::depthwise_forward(nullptr, nullptr, nullptr, t, stride3, nullptr), Error);
}

#endif  // SCALEBENCH_HAVE_CUDA
