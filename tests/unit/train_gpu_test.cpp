// GPU checks of the train workload's executor; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/train/train_bench.hpp"

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
#endif
