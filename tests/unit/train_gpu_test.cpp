// GPU checks of the train workload's executor; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/train/train_bench.hpp"
#include "workloads/train/train_kernels.cuh"

using namespace scalebench;

namespace {
bool have_gpu() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}
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

// Max pooling against a host reference, on odd sizes with padding and many ties (after a ReLU
// most values are 0): the maximum exactly; the gradient to the first maximum of each window and
// added into what is there when accumulating.
TEST(TrainGpu, MaxPoolMatchesAHostReference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (const train::PoolShape p :
       {train::PoolShape{2, 7, 6, 3, 4, 3, 3, 2, 1}, train::PoolShape{1, 6, 4, 5, 3, 2, 2, 2, 0}}) {
    const std::size_t nx = static_cast<std::size_t>(p.n) * p.h * p.w * p.c;
    const std::size_t ny = static_cast<std::size_t>(p.n) * p.oh * p.ow * p.c;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-3, 3);
    std::vector<float> x(nx), dy(ny), dx0(nx);
    for (float& v : x) v = static_cast<float>(std::max(0, small(rng)));  // ties
    for (float& v : dy) v = static_cast<float>(small(rng)) + 0.5f;
    for (float& v : dx0) v = static_cast<float>(small(rng));
    std::vector<float> want_y(ny), want_dx(nx, 0.0f);
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
    gpu::Stream stream;
    gpu::DeviceBuffer dev_x(nx * 4), dev_y(ny * 4), dev_dy(ny * 4), dev_dx(nx * 4), argmax(ny);
    CUDA_CHECK(cudaMemcpy(dev_x.get(), x.data(), nx * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dev_dy.get(), dy.data(), ny * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dev_dx.get(), dx0.data(), nx * 4, cudaMemcpyHostToDevice));
    auto* am = reinterpret_cast<std::uint8_t*>(argmax.get());
    train::maxpool_forward(dev_x.get(), dev_y.get(), am, train::DType::kFloat, p, stream.get());
    train::maxpool_backward(dev_dy.get(), am, dev_dx.get(), true, train::DType::kFloat, p, stream.get());
    std::vector<float> y(ny), acc(nx), dx(nx);
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CUDA_CHECK(cudaMemcpy(y.data(), dev_y.get(), ny * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(acc.data(), dev_dx.get(), nx * 4, cudaMemcpyDeviceToHost));
    train::maxpool_backward(dev_dy.get(), am, dev_dx.get(), false, train::DType::kFloat, p, stream.get());
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CUDA_CHECK(cudaMemcpy(dx.data(), dev_dx.get(), nx * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(y, want_y);
    EXPECT_EQ(dx, want_dx);
    for (std::size_t i = 0; i < nx; ++i) EXPECT_EQ(acc[i], dx0[i] + want_dx[i]) << i;
  }
}
#endif
