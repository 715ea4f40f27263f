// The gpt workload's AdamW on the GPU (workloads/gpt/loss_optimizer_kernels.cu): its four-wide path
// (every array aligned) and its one-wide path (a ZeRO-1 piece that starts mid-vector) give the same
// bits, and both are PyTorch's AdamW with global-norm clipping. Skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_bf16.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {

struct State {
  std::vector<float> master, m, v;
  std::vector<bf16> param, grad;
};

State random_state(std::size_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.f, 1.f);
  State x;
  for (std::size_t i = 0; i < n; ++i) {
    x.master.push_back(0.02f * d(rng));
    x.m.push_back(1e-3f * d(rng));
    x.v.push_back(1e-6f * std::abs(d(rng)));
    x.param.push_back(__float2bfloat16(x.master.back()));
    x.grad.push_back(__float2bfloat16(1e-2f * d(rng)));
  }
  return x;
}

// One AdamW step on the GPU over `x`, its arrays placed `offset` elements into their buffers.
State step_on_gpu(const State& x, std::size_t offset, float norm_sq) {
  const std::size_t n = x.master.size();
  gpu::DeviceBuffer master(4 * (n + offset)), m(4 * (n + offset)), v(4 * (n + offset)), param(2 * (n + offset)),
      grad(2 * (n + offset)), scalars(16);
  auto f32 = [&](const gpu::DeviceBuffer& b) { return reinterpret_cast<float*>(b.get()) + offset; };
  auto b16 = [&](const gpu::DeviceBuffer& b) { return reinterpret_cast<bf16*>(b.get()) + offset; };
  CUDA_CHECK(cudaMemcpy(f32(master), x.master.data(), 4 * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(f32(m), x.m.data(), 4 * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(f32(v), x.v.data(), 4 * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b16(param), x.param.data(), 2 * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b16(grad), x.grad.data(), 2 * n, cudaMemcpyHostToDevice));
  const float host_scalars[3] = {1.f - 0.9f, 1.f - 0.95f, norm_sq};  // bias corrections of step 1, |g|^2
  float* dev_scalars = reinterpret_cast<float*>(scalars.get());
  CUDA_CHECK(cudaMemcpy(dev_scalars, host_scalars, sizeof host_scalars, cudaMemcpyHostToDevice));
  adamw(f32(master), b16(param), b16(grad), f32(m), f32(v), static_cast<long long>(n), 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
        dev_scalars, dev_scalars + 2, 1.f, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  State out = x;
  CUDA_CHECK(cudaMemcpy(out.master.data(), f32(master), 4 * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.m.data(), f32(m), 4 * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.v.data(), f32(v), 4 * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.param.data(), b16(param), 2 * n, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

// 1,003 parameters: 250 groups of four and a tail of three. Clipping on (|g| = 2 > clip 1).
TEST(GptAdamwGpu, FourWideAndOneWidePathsGiveTheSameBitsAndPyTorchsUpdate) {
  if (!test_support::have_gpu()) GTEST_SKIP() << "no GPU";
  const State x = random_state(1003);
  const State wide = step_on_gpu(x, 0, 4.f), narrow = step_on_gpu(x, 1, 4.f);
  EXPECT_EQ(0, std::memcmp(wide.master.data(), narrow.master.data(), 4 * x.master.size()));
  EXPECT_EQ(0, std::memcmp(wide.m.data(), narrow.m.data(), 4 * x.m.size()));
  EXPECT_EQ(0, std::memcmp(wide.v.data(), narrow.v.data(), 4 * x.v.size()));
  EXPECT_EQ(0, std::memcmp(wide.param.data(), narrow.param.data(), 2 * x.param.size()));
  // PyTorch's AdamW in double: decay, then the bias-corrected moments of the clipped gradient.
  for (std::size_t i = 0; i < x.master.size(); ++i) {
    const double g = 0.5 * __bfloat162float(x.grad[i]);  // clip / |g| = 1 / 2
    const double m = 0.9 * x.m[i] + 0.1 * g, v = 0.95 * x.v[i] + 0.05 * g * g;
    const double decayed = x.master[i] * (1 - 1e-3 * 0.1), update = 1e-3 * (m / 0.1) / (std::sqrt(v / 0.05) + 1e-8);
    // fp32's rounding, relative to the terms summed (m's two can nearly cancel).
    ASSERT_NEAR(wide.master[i], decayed - update, 1e-6 * (std::abs(decayed) + std::abs(update))) << "parameter " << i;
    ASSERT_NEAR(wide.m[i], m, 1e-6 * (0.9 * std::abs(x.m[i]) + 0.1 * std::abs(g))) << "parameter " << i;
    ASSERT_EQ(__bfloat162float(wide.param[i]), __bfloat162float(__float2bfloat16(wide.master[i]))) << i;
  }
}

#endif  // SCALEBENCH_HAVE_CUDA
