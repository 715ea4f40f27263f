// GPU checks of the decoder's linear layer over a few rows (skinny_linear.cuh) against a host
// computation in double; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/skinny_linear.cuh"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;

std::vector<bf16> random_bf16(std::size_t n, std::mt19937& rng, float std) {
  std::normal_distribution<float> normal(0.f, std);
  std::vector<bf16> v(n);
  for (bf16& x : v) x = __float2bfloat16(normal(rng));
  return v;
}

gpu::DeviceBuffer upload(const std::vector<bf16>& v) {
  gpu::DeviceBuffer b(sizeof(bf16) * v.size());
  CUDA_CHECK(cudaMemcpy(b.get(), v.data(), sizeof(bf16) * v.size(), cudaMemcpyHostToDevice));
  return b;
}

double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

struct Case {
  int rows, in, out;
  bool bias, add, gelu;
};

// The largest error of the kernel's y against y computed in double from the same bf16 inputs,
// relative to the largest |y| (the output is rounded to bf16: about 0.4% of a value).
double worst_error(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  const auto x = random_bf16(static_cast<std::size_t>(c.rows) * c.in, rng, 1.f);
  const auto w = random_bf16(static_cast<std::size_t>(c.out) * c.in, rng, 0.05f);
  const auto b = random_bf16(static_cast<std::size_t>(c.out), rng, 0.5f);
  const auto y0 = random_bf16(static_cast<std::size_t>(c.rows) * c.out, rng, 1.f);
  gpu::DeviceBuffer dx = upload(x), dw = upload(w), db = upload(b), dy = upload(y0);
  skinny_linear(reinterpret_cast<bf16*>(dy.get()), reinterpret_cast<const bf16*>(dx.get()),
                reinterpret_cast<const bf16*>(dw.get()), c.bias ? reinterpret_cast<const bf16*>(db.get()) : nullptr,
                c.rows, c.in, c.out, c.add, c.gelu, nullptr);
  std::vector<bf16> y(y0.size());
  CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), sizeof(bf16) * y.size(), cudaMemcpyDeviceToHost));
  double worst = 0, largest = 0;
  for (int r = 0; r < c.rows; ++r)
    for (int o = 0; o < c.out; ++o) {
      double v = c.bias ? __bfloat162float(b[o]) : 0.0;
      for (int i = 0; i < c.in; ++i)
        v += static_cast<double>(__bfloat162float(x[static_cast<std::size_t>(r) * c.in + i])) *
             __bfloat162float(w[static_cast<std::size_t>(o) * c.in + i]);
      const std::size_t at = static_cast<std::size_t>(r) * c.out + o;
      if (c.add) v += __bfloat162float(y0[at]);
      if (c.gelu) v = gelu_tanh(v);
      worst = std::max(worst, std::abs(v - __bfloat162float(y[at])));
      largest = std::max(largest, std::abs(v));
    }
  return worst / largest;
}
}  // namespace

// Every row count the kernel takes, a width its loads cover in one pass and one in several with a
// remainder, output counts that leave a block part-empty, 1, 2, 4 and 8 warps an output, and each
// epilogue.
TEST(SkinnyLinearGpu, MatchesADoubleComputationForEveryRowCountAndEpilogue) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (int rows = 1; rows <= kSkinnyMaxRows; ++rows)
    for (const Case& c : {Case{rows, 64, 37, true, false, false}, Case{rows, 1600, 203, true, true, false},
                          Case{rows, 1032, 96, true, false, true}, Case{rows, 768, 45, false, true, false},
                          Case{rows, 4096, 24, true, true, true}}) {
      SCOPED_TRACE(testing::Message() << rows << " rows, in " << c.in << ", out " << c.out << (c.bias ? " bias" : "")
                                      << (c.add ? " add" : "") << (c.gelu ? " gelu" : ""));
      EXPECT_LT(worst_error(c, 7u + static_cast<unsigned>(rows)), 0.01);
    }
}

// What it cannot take is refused by name, so that the decoder falls back to cuBLASLt.
TEST(SkinnyLinearGpu, RefusesRowsWidthsAndAlignmentItCannotTake) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::DeviceBuffer buf(1 << 16);
  bf16* p = reinterpret_cast<bf16*>(buf.get());
  EXPECT_TRUE(skinny_linear_fits(8, 64, p, p, p, nullptr));
  EXPECT_FALSE(skinny_linear_fits(kSkinnyMaxRows + 1, 64, p, p, p, nullptr));
  EXPECT_FALSE(skinny_linear_fits(0, 64, p, p, p, nullptr));
  EXPECT_FALSE(skinny_linear_fits(1, 60, p, p, p, nullptr));
  EXPECT_FALSE(skinny_linear_fits(1, 64, p, p, p + 1, nullptr));
  EXPECT_THROW(skinny_linear(p, p, p + 1, nullptr, 1, 64, 8, false, false, nullptr), Error);
}
#endif
