// The kernels around quantized inference's cuDNN graphs against host references, exact: the
// quantization of a 16- or 32-bit tensor (elementwise at every vector width, and padding the
// image's channels), the image convolution's bias, ReLU and quantization, and max pooling on bytes
// (a set sign bit counting as 0). int8 rounds to nearest even and saturates at +-127; E4M3 is the
// host's encode_e4m3. Skipped where no GPU is visible.
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
#include "workloads/gpu/quant_scale.hpp"
#include "workloads/train/quant_kernels.cuh"

namespace scalebench::train {
namespace {
using test_support::download_as;
using test_support::have_gpu;
using test_support::upload_as;

std::uint8_t host_encode(float v, QuantFormat f) {
  if (f == QuantFormat::kE4M3) return gpu::encode_e4m3(v);
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(std::nearbyint(v), -127.0f, 127.0f)));
}

std::vector<std::uint8_t> download_bytes(const gpu::DeviceBuffer& b, std::size_t n, cudaStream_t s) {
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<std::uint8_t> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), b.get(), n, cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> normals(std::size_t n, float spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, spread);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Every vector width the channel counts give (fp16: 8, 4 and 2 elements; fp32: 4, 2 and 1) and
// the padding path (3 channels stored as 4 or 16).
TEST(QuantKernelsGpu, QuantizeRowsMatchesTheHostAtEveryWidthAndPads) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const long long rows = 777;
  struct Case {
    DType t;
    int c_in, c_out;
  };
  for (QuantFormat f : {QuantFormat::kInt8, QuantFormat::kE4M3})
    for (const Case& c :
         {Case{DType::kF16, 64, 64}, Case{DType::kF16, 12, 12}, Case{DType::kF16, 6, 6}, Case{DType::kF32, 8, 8},
          Case{DType::kF32, 6, 6}, Case{DType::kF32, 3, 3}, Case{DType::kF16, 3, 4}, Case{DType::kF16, 3, 16}}) {
      SCOPED_TRACE(std::string(gpu::name(f)) + " c_in " + std::to_string(c.c_in) + " c_out " + std::to_string(c.c_out) +
                   (c.t == DType::kF16 ? " fp16" : " fp32"));
      const float scale = 0.037f;
      gpu::DeviceBuffer x = upload_as(normals(rows * c.c_in, 2.0f, 5), c.t, s);
      const std::vector<float> xs = download_as(x, c.t, static_cast<std::size_t>(rows * c.c_in), s);
      gpu::DeviceBuffer q(static_cast<std::size_t>(rows * c.c_out));
      quantize_rows(x.get(), c.t, c.c_in, reinterpret_cast<std::uint8_t*>(q.get()), c.c_out, rows, scale, f, s);
      const std::vector<std::uint8_t> got = download_bytes(q, static_cast<std::size_t>(rows * c.c_out), s);
      int wrong = 0;
      for (long long r = 0; r < rows; ++r)
        for (int ch = 0; ch < c.c_out; ++ch) {
          const std::uint8_t want = ch < c.c_in ? host_encode(xs[r * c.c_in + ch] * (1.0f / scale), f) : 0;
          wrong += got[r * c.c_out + ch] != want;
        }
      EXPECT_EQ(wrong, 0);
    }
}

TEST(QuantKernelsGpu, BiasActQuantizeMatchesTheHost) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  const long long rows = 513;
  for (QuantFormat f : {QuantFormat::kInt8, QuantFormat::kE4M3})
    for (int c : {64, 12, 3})
      for (bool relu : {true, false}) {
        SCOPED_TRACE(std::string(gpu::name(f)) + " c " + std::to_string(c) + (relu ? " relu" : ""));
        const float scale = 0.05f;
        gpu::DeviceBuffer x = upload_as(normals(rows * c, 3.0f, 7), DType::kF16, s);
        const std::vector<float> xs = download_as(x, DType::kF16, static_cast<std::size_t>(rows * c), s);
        const std::vector<float> bias = normals(static_cast<std::size_t>(c), 1.0f, 9);
        gpu::DeviceBuffer b = upload_as(bias, DType::kF32, s);
        gpu::DeviceBuffer q(static_cast<std::size_t>(rows * c));
        bias_act_quantize(x.get(), DType::kF16, reinterpret_cast<const float*>(b.get()), relu,
                          reinterpret_cast<std::uint8_t*>(q.get()), rows, c, scale, f, s);
        const std::vector<std::uint8_t> got = download_bytes(q, static_cast<std::size_t>(rows * c), s);
        int wrong = 0;
        for (long long i = 0; i < rows * c; ++i) {
          float v = xs[static_cast<std::size_t>(i)] + bias[static_cast<std::size_t>(i % c)];
          if (relu) v = std::max(v, 0.0f);
          wrong += got[static_cast<std::size_t>(i)] != host_encode(v * (1.0f / scale), f);
        }
        EXPECT_EQ(wrong, 0);
      }
}

// ResNet's 3x3 window, stride 2, padding 1, on an odd size, at 16-, 8-, 4- and 1-byte vectors;
// bytes with the sign bit set (never after a ReLU, but E4M3's -0 is one) count as 0.
TEST(QuantKernelsGpu, MaxPoolBytesMatchesTheHostAtEveryWidth) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream stream;
  cudaStream_t s = stream.get();
  for (int c : {64, 24, 12, 3}) {
    SCOPED_TRACE("c " + std::to_string(c));
    const PoolShape p{5, 9, 9, c, 5, 5, 3, 2, 1};
    std::mt19937 rng(11);
    std::vector<std::uint8_t> x(static_cast<std::size_t>(p.n) * p.h * p.w * c);
    for (std::uint8_t& v : x) v = static_cast<std::uint8_t>(rng() & 0xff);
    gpu::DeviceBuffer dx(x.size()), dy(static_cast<std::size_t>(p.n) * p.oh * p.ow * c);
    CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), x.size(), cudaMemcpyHostToDevice));
    maxpool_bytes(reinterpret_cast<const std::uint8_t*>(dx.get()), reinterpret_cast<std::uint8_t*>(dy.get()), p, s);
    const std::vector<std::uint8_t> got = download_bytes(dy, dy.bytes(), s);
    int wrong = 0;
    for (int n = 0; n < p.n; ++n)
      for (int oy = 0; oy < p.oh; ++oy)
        for (int ox = 0; ox < p.ow; ++ox)
          for (int ch = 0; ch < c; ++ch) {
            std::uint8_t best = 0;
            for (int ky = 0; ky < p.k; ++ky)
              for (int kx = 0; kx < p.k; ++kx) {
                const int iy = oy * p.stride - p.pad + ky, ix = ox * p.stride - p.pad + kx;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const std::uint8_t v = x[((static_cast<std::size_t>(n) * p.h + iy) * p.w + ix) * c + ch];
                best = std::max<std::uint8_t>(best, v & 0x80 ? 0 : v);
              }
            wrong += got[((static_cast<std::size_t>(n) * p.oh + oy) * p.ow + ox) * c + ch] != best;
          }
    EXPECT_EQ(wrong, 0);
  }
}

}  // namespace
}  // namespace scalebench::train
#endif
