// The train workload's own kernels one by one against host references (pools, subsampling and
// adds, concatenation, ReLU and bias-ReLU, batch norm in 16 bits against 32), exact or to the
// format's precision. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "tests/unit/workloads/train/device_values.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/train/train_kernels.cuh"

using namespace scalebench;

namespace {
using scalebench::test_support::download_as;
using scalebench::test_support::have_gpu;
using scalebench::test_support::upload_as;
}  // namespace

// The factorized reduction's shifted path against a host reference: every other row and column
// from (1, 1), zeros past the edge of an odd size, and from (0, 0); the gradient back to the
// positions taken (zeros elsewhere, or added into what is there), exact in fp32 and fp16, on the
// one-channel and the 16-byte paths. Then the sum of two outputs, in place too.
TEST(TrainGpu, SubsampleAndAddMatchAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  auto bytes = [&](const gpu::DeviceBuffer& b) {
    std::vector<unsigned char> h(b.bytes());
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
    return h;
  };
  struct Case {
    int n, h, w, c, offset;
  };
  for (const Case cs :
       {Case{2, 7, 7, 3, 1}, Case{2, 6, 5, 16, 1}, Case{1, 7, 6, 8, 0}, Case{2, 7, 7, 12, 1}, Case{1, 5, 6, 6, 0}}) {
    const train::PoolShape p{cs.n, cs.h, cs.w, cs.c, (cs.h - 1) / 2 + 1, (cs.w - 1) / 2 + 1, 1, 2, 0};
    const std::size_t nx = static_cast<std::size_t>(p.n) * p.h * p.w * p.c;
    const std::size_t ny = static_cast<std::size_t>(p.n) * p.oh * p.ow * p.c;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> small(-6, 6);
    std::vector<float> x(nx), dy(ny), dx0(nx);
    for (float& v : x) v = static_cast<float>(small(rng));
    for (float& v : dy) v = static_cast<float>(small(rng));
    for (float& v : dx0) v = static_cast<float>(small(rng));
    std::vector<float> want_y(ny, 0.0f), want_dx(nx, 0.0f), want_acc = dx0;
    for (int img = 0; img < p.n; ++img)
      for (int oy = 0; oy < p.oh; ++oy)
        for (int ox = 0; ox < p.ow; ++ox) {
          const int iy = 2 * oy + cs.offset, ix = 2 * ox + cs.offset;
          if (iy >= p.h || ix >= p.w) continue;  // past the edge: y stays 0
          for (int ch = 0; ch < p.c; ++ch) {
            const std::size_t o = ((static_cast<std::size_t>(img) * p.oh + oy) * p.ow + ox) * p.c + ch;
            const std::size_t at = ((static_cast<std::size_t>(img) * p.h + iy) * p.w + ix) * p.c + ch;
            want_y[o] = x[at];
            want_dx[at] = dy[o];
            want_acc[at] += dy[o];
          }
        }
    for (const train::DType t : {train::DType::kF32, train::DType::kF16}) {
      SCOPED_TRACE("channels " + std::to_string(p.c) + ", offset " + std::to_string(cs.offset) +
                   (t == train::DType::kF16 ? ", fp16" : ", fp32"));
      const std::size_t eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
      const gpu::DeviceBuffer dev_x = upload_as(x, t, s), dev_dy = upload_as(dy, t, s);
      gpu::DeviceBuffer dev_acc = upload_as(dx0, t, s), dev_y(ny * eb), dev_dx = upload_as(dx0, t, s);
      train::subsample_forward(dev_x.get(), dev_y.get(), t, p, cs.offset, s);
      train::subsample_backward(dev_dy.get(), dev_dx.get(), false, t, p, cs.offset, s);  // overwrites all of dx
      train::subsample_backward(dev_dy.get(), dev_acc.get(), true, t, p, cs.offset, s);
      EXPECT_EQ(bytes(dev_y), bytes(upload_as(want_y, t, s)));
      EXPECT_EQ(bytes(dev_dx), bytes(upload_as(want_dx, t, s)));
      EXPECT_EQ(bytes(dev_acc), bytes(upload_as(want_acc, t, s)));
    }
  }
  // y = a + b on 16-byte vectors (n = 64) and single elements (n = 13), then a += b in place.
  for (const train::DType t : {train::DType::kF32, train::DType::kF16, train::DType::kBf16})
    for (const std::size_t n : {std::size_t{64}, std::size_t{13}}) {
      std::vector<float> a(n), b(n), sum(n), twice(n);
      for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(static_cast<int>(i % 9) - 4);
        b[i] = static_cast<float>(static_cast<int>(i % 5) * 3 - 6);
        sum[i] = a[i] + b[i], twice[i] = sum[i] + b[i];
      }
      gpu::DeviceBuffer da = upload_as(a, t, s), db = upload_as(b, t, s),
                        dy(n * static_cast<std::size_t>(gpu::dtype_bytes(t)));
      train::add_forward(da.get(), db.get(), dy.get(), t, static_cast<long long>(n), s);
      EXPECT_EQ(download_as(dy, t, n, s), sum) << "type " << static_cast<int>(t) << " n " << n;
      train::add_forward(dy.get(), db.get(), dy.get(), t, static_cast<long long>(n), s);
      EXPECT_EQ(download_as(dy, t, n, s), twice) << "type " << static_cast<int>(t) << " n " << n;
    }
}

// Windowed average pooling against a host reference (PyTorch's avg_pool2d divisors, with the
// padding counted and not), in fp32 and fp16, on the one-channel and 16-byte paths, the gradient
// also added into what is there.
TEST(TrainGpu, AvgPoolMatchesAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  for (const train::PoolShape p :
       {train::PoolShape{2, 7, 6, 3, 7, 6, 3, 1, 1}, train::PoolShape{3, 9, 8, 16, 2, 2, 5, 3, 0},
        train::PoolShape{2, 5, 5, 8, 3, 3, 3, 2, 1}, train::PoolShape{2, 5, 5, 12, 3, 3, 3, 2, 1},
        train::PoolShape{1, 4, 4, 6, 4, 4, 3, 1, 1}}) {
    const std::size_t nx = static_cast<std::size_t>(p.n) * p.h * p.w * p.c;
    const std::size_t ny = static_cast<std::size_t>(p.n) * p.oh * p.ow * p.c;
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> small(-4, 4);
    std::vector<float> x(nx), dy(ny), dx0(nx);
    for (float& v : x) v = static_cast<float>(small(rng));
    for (float& v : dy) v = static_cast<float>(small(rng));
    for (float& v : dx0) v = static_cast<float>(small(rng));
    for (const bool count_pad : {true, false}) {
      std::vector<float> want_y(ny, 0.0f), want_dx(nx, 0.0f);
      for (int img = 0; img < p.n; ++img)
        for (int oy = 0; oy < p.oh; ++oy)
          for (int ox = 0; ox < p.ow; ++ox) {
            const int y0 = oy * p.stride - p.pad, x0 = ox * p.stride - p.pad;
            int inside = 0;
            for (int iy = std::max(y0, 0); iy < std::min(y0 + p.k, p.h); ++iy)
              for (int ix = std::max(x0, 0); ix < std::min(x0 + p.k, p.w); ++ix) ++inside;
            const int div =
                count_pad ? (std::min(y0 + p.k, p.h + p.pad) - y0) * (std::min(x0 + p.k, p.w + p.pad) - x0) : inside;
            for (int ch = 0; ch < p.c; ++ch) {
              const std::size_t o = ((static_cast<std::size_t>(img) * p.oh + oy) * p.ow + ox) * p.c + ch;
              for (int iy = std::max(y0, 0); iy < std::min(y0 + p.k, p.h); ++iy)
                for (int ix = std::max(x0, 0); ix < std::min(x0 + p.k, p.w); ++ix) {
                  const std::size_t at = ((static_cast<std::size_t>(img) * p.h + iy) * p.w + ix) * p.c + ch;
                  want_y[o] += x[at] / static_cast<float>(div);
                  want_dx[at] += dy[o] / static_cast<float>(div);
                }
            }
          }
      for (const train::DType t : {train::DType::kF32, train::DType::kF16}) {
        SCOPED_TRACE("channels " + std::to_string(p.c) + ", window " + std::to_string(p.k) +
                     (count_pad ? ", padding counted, " : ", padding left out, ") +
                     (t == train::DType::kF16 ? "fp16" : "fp32"));
        const std::size_t eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
        const gpu::DeviceBuffer dev_x = upload_as(x, t, s), dev_dy = upload_as(dy, t, s),
                                dev_acc = upload_as(dx0, t, s);
        gpu::DeviceBuffer dev_y(ny * eb), dev_dx(nx * eb);
        train::avgpool2d_forward(dev_x.get(), dev_y.get(), t, p, count_pad, s);
        train::avgpool2d_backward(dev_dy.get(), dev_dx.get(), false, t, p, count_pad, s);
        train::avgpool2d_backward(dev_dy.get(), dev_acc.get(), true, t, p, count_pad, s);
        const std::vector<float> y = download_as(dev_y, t, ny, s), dx = download_as(dev_dx, t, nx, s),
                                 acc = download_as(dev_acc, t, nx, s);
        const float tol = t == train::DType::kF16 ? 4e-3f : 1e-5f;
        for (std::size_t i = 0; i < ny; ++i)
          ASSERT_NEAR(y[i], want_y[i], tol * std::max(1.0f, std::fabs(want_y[i]))) << "y at " << i;
        for (std::size_t i = 0; i < nx; ++i) {
          ASSERT_NEAR(dx[i], want_dx[i], tol * std::max(1.0f, std::fabs(want_dx[i]))) << "dx at " << i;
          ASSERT_NEAR(acc[i], dx0[i] + want_dx[i], tol * std::max(1.0f, std::fabs(dx0[i] + want_dx[i])))
              << "accumulated dx at " << i;
        }
      }
    }
  }
}

// A concatenation's copies: an input into its slice of the output's channels and the slice of the
// gradient back (written, then added), exact, in fp32, fp16 and bf16, on the 16-byte path (8 and
// 16 channels at 16-aligned offsets), the 8- and 4-byte ones in 16 bits (12, 4 and 8 channels; 6,
// 2 and 10) and the one-element one (3 channels).
TEST(TrainGpu, ConcatCopiesMatchAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-8, 8);
  const long long rows = 37;
  for (const train::DType t : {train::DType::kF32, train::DType::kF16, train::DType::kBf16}) {
    for (const std::vector<int>& parts : {std::vector<int>{8, 16, 8}, std::vector<int>{3, 8, 5},
                                          std::vector<int>{12, 4, 8}, std::vector<int>{6, 2, 10}}) {
      SCOPED_TRACE("dtype bytes " + std::to_string(gpu::dtype_bytes(t)) + ", first part " + std::to_string(parts[0]));
      int total = 0;
      for (int c : parts) total += c;
      const std::size_t eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
      gpu::DeviceBuffer out(static_cast<std::size_t>(rows) * total * eb);
      std::vector<std::vector<float>> in;
      std::vector<gpu::DeviceBuffer> dev_in;
      int at = 0;
      for (int c : parts) {
        in.emplace_back(static_cast<std::size_t>(rows) * c);
        for (float& v : in.back()) v = static_cast<float>(small(rng));
        dev_in.push_back(upload_as(in.back(), t, s));
        train::copy_channels(dev_in.back().get(), c, 0, out.get(), total, at, c, false, t, rows, s);
        at += c;
      }
      const std::vector<float> y = download_as(out, t, static_cast<std::size_t>(rows) * total, s);
      for (long long r = 0; r < rows; ++r) {
        int off = 0;
        for (std::size_t j = 0; j < parts.size(); ++j) {
          for (int k = 0; k < parts[j]; ++k)
            ASSERT_EQ(y[static_cast<std::size_t>(r * total + off + k)],
                      in[j][static_cast<std::size_t>(r * parts[j] + k)])
                << "row " << r << " part " << j;
          off += parts[j];
        }
      }
      // Backward: part 1's slice back into a buffer of its width, written, then added onto part
      // 1's own values (which it equals, so the sum is twice them).
      const int c1 = parts[1], at1 = parts[0];
      gpu::DeviceBuffer dx(static_cast<std::size_t>(rows) * c1 * eb);
      train::copy_channels(out.get(), total, at1, dx.get(), c1, 0, c1, false, t, rows, s);
      train::copy_channels(out.get(), total, at1, dev_in[1].get(), c1, 0, c1, true, t, rows, s);
      const std::vector<float> got = download_as(dx, t, static_cast<std::size_t>(rows) * c1, s),
                               acc = download_as(dev_in[1], t, static_cast<std::size_t>(rows) * c1, s);
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], in[1][i]) << "at " << i;
        ASSERT_EQ(acc[i], 2 * in[1][i]) << "at " << i;
      }
    }
  }
}

// Max pooling against a host reference, on odd sizes with padding and many ties (after a ReLU
// most values are 0), with channel counts that take the one-channel and the 16-byte paths, in
// fp32 and fp16 (every value exact in both): the maximum; the gradient to the first maximum of
// each window, and added into what is there when accumulating.
TEST(TrainGpu, MaxPoolMatchesAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  auto upload = [&](const std::vector<float>& v, train::DType t) { return upload_as(v, t, s); };
  // A buffer's bytes back, to compare results exactly.
  auto bytes = [&](const gpu::DeviceBuffer& b) {
    std::vector<unsigned char> h(b.bytes());
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
    return h;
  };
  for (const train::PoolShape p :
       {train::PoolShape{2, 7, 6, 3, 4, 3, 3, 2, 1}, train::PoolShape{1, 6, 4, 5, 3, 2, 2, 2, 0},
        train::PoolShape{3, 9, 8, 16, 5, 4, 3, 2, 1}, train::PoolShape{2, 7, 7, 12, 4, 4, 3, 2, 1},
        train::PoolShape{1, 5, 5, 6, 3, 3, 3, 2, 1}}) {
    const std::size_t nx = static_cast<std::size_t>(p.n) * p.h * p.w * p.c;
    const std::size_t ny = static_cast<std::size_t>(p.n) * p.oh * p.ow * p.c;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-3, 3);
    std::vector<float> x(nx), dy(ny), dx0(nx);
    for (float& v : x) v = static_cast<float>(std::max(0, small(rng)));  // ties
    for (float& v : dy) v = static_cast<float>(small(rng)) + 0.5f;
    for (float& v : dx0) v = static_cast<float>(small(rng));
    std::vector<float> want_y(ny), want_dx(nx, 0.0f), want_acc(nx);
    for (int img = 0; img < p.n; ++img)
      for (int oy = 0; oy < p.oh; ++oy)
        for (int ox = 0; ox < p.ow; ++ox)
          for (int ch = 0; ch < p.c; ++ch) {
            std::size_t best = nx;
            for (int ky = 0; ky < p.k; ++ky)
              for (int kx = 0; kx < p.k; ++kx) {
                const int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const std::size_t at = ((static_cast<std::size_t>(img) * p.h + iy) * p.w + ix) * p.c + ch;
                if (best == nx || x[at] > x[best]) best = at;
              }
            const std::size_t o = ((static_cast<std::size_t>(img) * p.oh + oy) * p.ow + ox) * p.c + ch;
            want_y[o] = x[best];
            want_dx[best] += dy[o];
          }
    for (std::size_t i = 0; i < nx; ++i) want_acc[i] = dx0[i] + want_dx[i];
    for (const train::DType t : {train::DType::kF32, train::DType::kF16}) {
      SCOPED_TRACE("channels " + std::to_string(p.c) + ", " + (t == train::DType::kF16 ? "fp16" : "fp32"));
      const gpu::DeviceBuffer dev_x = upload(x, t), dev_dy = upload(dy, t), dev_acc = upload(dx0, t);
      gpu::DeviceBuffer dev_y(ny * static_cast<std::size_t>(gpu::dtype_bytes(t))),
          dev_dx(nx * static_cast<std::size_t>(gpu::dtype_bytes(t))), argmax(ny);
      auto* am = reinterpret_cast<std::uint8_t*>(argmax.get());
      train::maxpool_forward(dev_x.get(), dev_y.get(), am, t, p, s);
      train::maxpool_backward(dev_dy.get(), am, dev_acc.get(), true, t, p, s);
      train::maxpool_backward(dev_dy.get(), am, dev_dx.get(), false, t, p, s);
      EXPECT_EQ(bytes(dev_y), bytes(upload(want_y, t)));
      EXPECT_EQ(bytes(dev_dx), bytes(upload(want_dx, t)));
      EXPECT_EQ(bytes(dev_acc), bytes(upload(want_acc, t)));
    }
  }
}

// The ReLU in 16-byte vectors and in single elements (a count not a multiple of the vector), and
// the bias with its ReLU in one pass each way (VGG's layers), against a host reference, in fp32,
// fp16 and bf16 on values exact in all three: outputs, gradients (also accumulated) and the bias's
// per-channel sums, at the channel counts of VGG-16 (64 to 512) and of the tiny net (8).
TEST(TrainGpu, ReluAndBiasReluMatchAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-8, 8);
  for (const train::DType t : {train::DType::kF32, train::DType::kF16, train::DType::kBf16}) {
    const std::size_t eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
    for (const long long n : {4096LL, 4093LL}) {  // the 16-byte path, then one element at a time
      SCOPED_TRACE("relu, n " + std::to_string(n) + ", dtype bytes " + std::to_string(eb));
      std::vector<float> x(static_cast<std::size_t>(n)), dy(x.size()), acc(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(small(rng));
        dy[i] = static_cast<float>(small(rng)) + 0.5f;
        acc[i] = static_cast<float>(small(rng));
      }
      const gpu::DeviceBuffer dx_in = upload_as(x, t, s), ddy = upload_as(dy, t, s), dacc = upload_as(acc, t, s);
      gpu::DeviceBuffer dy_out(x.size() * eb), ddx(x.size() * eb);
      train::relu_forward(dx_in.get(), dy_out.get(), t, n, s);
      train::relu_backward(dy_out.get(), ddy.get(), ddx.get(), false, t, n, s);
      train::relu_backward(dy_out.get(), ddy.get(), dacc.get(), true, t, n, s);
      const std::vector<float> y = download_as(dy_out, t, x.size(), s), dx = download_as(ddx, t, x.size(), s),
                               dx_acc = download_as(dacc, t, x.size(), s);
      for (std::size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(y[i], std::max(x[i], 0.0f)) << "at " << i;
        ASSERT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.0f) << "at " << i;
        ASSERT_EQ(dx_acc[i], acc[i] + (x[i] > 0 ? dy[i] : 0.0f)) << "at " << i;
      }
    }
    for (const int c : {8, 64, 512}) {
      SCOPED_TRACE("bias and relu, channels " + std::to_string(c) + ", dtype bytes " + std::to_string(eb));
      ASSERT_TRUE(train::bias_relu_fusable(t, c));
      const long long rows = 999;
      std::vector<float> x(static_cast<std::size_t>(rows) * c), bias(static_cast<std::size_t>(c)), dy(x.size());
      for (float& v : x) v = static_cast<float>(small(rng));
      for (float& v : bias) v = static_cast<float>(small(rng)) / 2;
      for (float& v : dy) v = static_cast<float>(small(rng));
      const gpu::DeviceBuffer dx_in = upload_as(x, t, s), dbias = upload_as(bias, t, s), ddy = upload_as(dy, t, s);
      gpu::DeviceBuffer dy_out(x.size() * eb), ddx(x.size() * eb), dsums(static_cast<std::size_t>(c) * 4);
      CUDA_CHECK(cudaMemsetAsync(dsums.get(), 0, dsums.bytes(), s));
      train::bias_relu_forward(dx_in.get(), dbias.get(), dy_out.get(), t, rows, c, s);
      train::relu_backward_bias(dy_out.get(), ddy.get(), ddx.get(), t, rows, c, reinterpret_cast<float*>(dsums.get()),
                                s);
      const std::vector<float> y = download_as(dy_out, t, x.size(), s), dx = download_as(ddx, t, x.size(), s);
      std::vector<float> sums(static_cast<std::size_t>(c));
      CUDA_CHECK(cudaMemcpy(sums.data(), dsums.get(), dsums.bytes(), cudaMemcpyDeviceToHost));
      std::vector<double> want_sums(static_cast<std::size_t>(c), 0.0);
      std::size_t wrong_y = 0, wrong_dx = 0, first_dx = x.size(), last_dx = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::size_t ch = i % static_cast<std::size_t>(c);
        const float want_y = std::max(x[i] + bias[ch], 0.0f), want_dx = want_y > 0 ? dy[i] : 0.0f;
        wrong_y += y[i] != want_y;
        if (dx[i] != want_dx) {
          ++wrong_dx;
          first_dx = std::min(first_dx, i);
          last_dx = i;
        }
        want_sums[ch] += want_dx;
      }
      EXPECT_EQ(wrong_y, 0u);
      EXPECT_EQ(wrong_dx, 0u) << "rows " << first_dx / static_cast<std::size_t>(c) << " to "
                              << last_dx / static_cast<std::size_t>(c) << " of " << rows;
      for (std::size_t ch = 0; ch < sums.size(); ++ch) EXPECT_EQ(sums[ch], want_sums[ch]) << "channel " << ch;
    }
  }
  EXPECT_FALSE(train::bias_relu_fusable(train::DType::kF16, 12));    // not whole vectors
  EXPECT_FALSE(train::bias_relu_fusable(train::DType::kF16, 4096));  // more vectors than a block's threads
}

// Our batch norm in fp16 (16-byte channel vectors) against fp32 (the path the tiny net's finite
// differences check), on inputs exact in both, with the residual add, the ReLU (its mask of
// bits) and accumulation into dx: outputs, saved statistics and parameter gradients agree to fp16's precision.
TEST(TrainGpu, HalfBatchNormMatchesFloat) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  const long long rows = 300;
  // 24 channels: 16-byte vectors in fp16 and fp32; 12 and 6: 8- and 4-byte ones in fp16 (as
  // NASNet's 44 and 22 channels take).
  for (const int c : {24, 12, 6}) {
    SCOPED_TRACE("channels " + std::to_string(c));
    const std::size_t n = static_cast<std::size_t>(rows) * c;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> eighths(-24, 24);
    auto values = [&](std::size_t count) {
      std::vector<float> v(count);
      for (float& f : v) f = static_cast<float>(eighths(rng)) / 8.0f;
      return v;
    };
    const std::vector<float> x = values(n), z = values(n), dy = values(n), dx0 = values(n);
    std::vector<float> params(2 * static_cast<std::size_t>(c));
    for (int i = 0; i < c; ++i)
      params[static_cast<std::size_t>(i)] = 1.0f + 0.125f * static_cast<float>(i % 4),
      params[static_cast<std::size_t>(c + i)] = 0.25f * static_cast<float>(i % 3);
    struct Out {
      std::vector<float> y, dx, dz, stats, dparams;
    };
    auto run = [&](train::DType t) {
      const std::size_t eb = static_cast<std::size_t>(gpu::dtype_bytes(t));
      auto upload = [&](const std::vector<float>& v) { return upload_as(v, t, s); };
      auto download = [&](const gpu::DeviceBuffer& b) { return download_as(b, t, n, s); };
      const gpu::DeviceBuffer dev_x = upload(x), dev_z = upload(z), dev_dy = upload(dy), dev_dx = upload(dx0);
      gpu::DeviceBuffer dev_y(n * eb), dev_dz(n * eb), f32(static_cast<std::size_t>(c) * 4 * 8),
          work(train::bn_work_bytes(c)), mask(train::bn_relu_mask_bytes(rows, c, t));
      float* p = reinterpret_cast<float*>(f32.get());  // gamma, beta, mean, inv_std, running mean, var, dparams (2c)
      CUDA_CHECK(cudaMemcpy(p, params.data(), params.size() * 4, cudaMemcpyHostToDevice));
      train::fill_value(p + 4 * c, c, 0.0f, s);
      train::fill_value(p + 5 * c, c, 1.0f, s);
      train::bn_forward_train(dev_x.get(), dev_z.get(), dev_y.get(), t, rows, c, p, p + c, p + 2 * c, p + 3 * c,
                              p + 4 * c, p + 5 * c, 0.1, 1e-5, true, reinterpret_cast<std::uint8_t*>(mask.get()),
                              work.get(), s);
      train::bn_backward(dev_x.get(), reinterpret_cast<const std::uint8_t*>(mask.get()), dev_dy.get(), dev_dx.get(),
                         dev_dz.get(), true, false, t, rows, c, p, p + 2 * c, p + 3 * c, true, p + 6 * c, work.get(),
                         s);
      Out o{
          download(dev_y), download(dev_dx), download(dev_dz), std::vector<float>(4 * static_cast<std::size_t>(c)), {}};
      o.dparams.resize(2 * static_cast<std::size_t>(c));
      CUDA_CHECK(cudaMemcpy(o.stats.data(), p + 2 * c, o.stats.size() * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(o.dparams.data(), p + 6 * c, o.dparams.size() * 4, cudaMemcpyDeviceToHost));
      return o;
    };
    const Out f = run(train::DType::kF32), h = run(train::DType::kF16);
    auto near = [](const std::vector<float>& a, const std::vector<float>& b, float tol, const char* what) {
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_NEAR(a[i], b[i], tol * std::max(1.0f, std::fabs(a[i]))) << what << " " << i;
    };
    near(f.y, h.y, 4e-3f, "y");
    near(f.dz, h.dz, 0.0f, "dz");  // dy masked by the ReLU: exact
    near(f.dx, h.dx, 4e-3f, "dx");
    near(f.stats, h.stats, 1e-5f, "saved and running statistics");  // from the same (exact) inputs
    near(f.dparams, h.dparams, 1e-3f, "dgamma, dbeta");
    // Not all masked: the ReLU let some gradient through.
    EXPECT_GT(std::count_if(f.dz.begin(), f.dz.end(), [](float v) { return v != 0.0f; }), static_cast<long>(n / 4));
  }
}

#endif
