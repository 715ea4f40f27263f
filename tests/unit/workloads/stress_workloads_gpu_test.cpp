// GPU checks of the kernels behind the hbm, burn and checksum workloads; skipped where no GPU is
// visible.
#include <gtest/gtest.h>

#include "workloads/burn/burn_decay.hpp"

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/burn/burn_bench.hpp"
#include "workloads/checksum/train_checksum.hpp"
#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/memory_stream.cuh"
#include "workloads/gpu/square_gemm.hpp"

using namespace scalebench;

namespace {
using scalebench::test_support::have_gpu;

float* f(const gpu::DeviceBuffer& b) { return reinterpret_cast<float*>(b.get()); }
}  // namespace

// Every op computes what its check expects, and one wrong element is counted as one.
TEST(StressGpu, StreamOpsAreExactAndTheCheckSeesOneBadElement) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const std::size_t n = (1u << 20) + 4096;  // not a multiple of the 1024-periodic pattern's square
  gpu::DeviceBuffer a(n * 4), b(n * 4), c(n * 4), sum(8);
  gpu::Stream s;
  gpu::fill_stream_inputs(f(b), f(c), n, s.get());
  auto* psum = reinterpret_cast<unsigned long long*>(sum.get());
  for (auto op : {gpu::StreamOp::kRead, gpu::StreamOp::kWrite, gpu::StreamOp::kCopy, gpu::StreamOp::kTriad}) {
    ASSERT_EQ(cudaMemsetAsync(psum, 0, 8, s.get()), cudaSuccess);
    gpu::launch_stream_op(op, f(a), f(b), f(c), n, psum, 64, s.get());
    EXPECT_EQ(gpu::count_stream_wrong(op, f(a), n, psum, s.get()), 0u) << gpu::stream_op_name(op);
  }
  const float bad = -1;
  ASSERT_EQ(cudaMemcpy(f(a) + 12345, &bad, 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(gpu::count_stream_wrong(gpu::StreamOp::kTriad, f(a), n, psum, s.get()), 1u);
  // read's check: a sum off by one is wrong.
  ASSERT_EQ(cudaMemsetAsync(psum, 0, 8, s.get()), cudaSuccess);
  gpu::launch_stream_op(gpu::StreamOp::kRead, f(a), f(b), f(c), n, psum, 64, s.get());
  gpu::launch_stream_op(gpu::StreamOp::kRead, f(a), f(b), f(c), 4, psum, 1, s.get());
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  EXPECT_EQ(gpu::count_stream_wrong(gpu::StreamOp::kRead, f(a), n, psum, s.get()), 1u);
}

// The same GEMM on the same inputs gives the same hash; one flipped bit of its output does not.
TEST(StressGpu, SquareGemmIsDeterministicAndTheHashSeesOneBit) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  gpu::SquareGemm g(512);
  g.fill_inputs(7, s.get());
  g.run(s.get());
  const std::uint64_t h1 = gpu::hash_bf16(g.output(), g.elements(), s.get());
  g.run(s.get());
  EXPECT_EQ(gpu::hash_bf16(g.output(), g.elements(), s.get()), h1);
  unsigned short x = 0;
  auto* out = static_cast<unsigned short*>(const_cast<void*>(g.output()));
  ASSERT_EQ(cudaMemcpy(&x, out + 777, 2, cudaMemcpyDeviceToHost), cudaSuccess);
  x ^= 1;
  ASSERT_EQ(cudaMemcpy(out + 777, &x, 2, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_NE(gpu::hash_bf16(g.output(), g.elements(), s.get()), h1);
  gpu::SquareGemm other(512);
  other.fill_inputs(8, s.get());
  other.run(s.get());
  EXPECT_NE(gpu::hash_bf16(other.output(), other.elements(), s.get()), h1) << "another seed, other inputs";
}

// The training checksum trains (its loss falls from about ln(1000) at every step), and gives the
// same weights, bit for bit, when it runs again; another seed gives other weights.
TEST(StressGpu, TrainChecksumLearnsAndRepeatsBitForBit) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  checksum::TrainChecksum train(512, 6, 1);
  const std::vector<double> loss = train.run(s.get());
  ASSERT_EQ(loss.size(), 6u);
  EXPECT_NEAR(loss.front(), std::log(1000.0), 1.0) << "small initial weights: about uniform over 1000 classes";
  for (std::size_t i = 1; i < loss.size(); ++i) EXPECT_LT(loss[i], loss[i - 1]) << "step " << i;
  const std::uint64_t h = train.weights_hash(s.get());
  EXPECT_EQ(train.run(s.get()), loss);
  EXPECT_EQ(train.weights_hash(s.get()), h);
  checksum::TrainChecksum other(512, 6, 2);
  other.run(s.get());
  EXPECT_NE(other.weights_hash(s.get()), h);
}

// A short burn samples every interval, keeps its result, and says its clocks where NVML is.
TEST(StressGpu, BurnSamplesEachIntervalAndKeepsItsResult) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  compute::DeviceInfo gpu;
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  gpu.sm_count = p.multiProcessorCount;
  for (const char* target : {"gemm", "hbm"}) {
    const Json params{{"target", target}, {"duration_s", 1.0}, {"interval_s", 0.1},
                      {"n", 2048},        {"bytes", 64 << 20}, {"seed", 1}};
    const compute::RankOutcome o = burn::measure_burn(params, gpu);
    EXPECT_GE(o.seconds.size(), 5u) << target;
    EXPECT_EQ(o.wrong, 0) << target;
    EXPECT_EQ(o.details["series"].size(), o.seconds.size()) << target;
    EXPECT_GT(o.details["decay"].get<double>(), 0.5) << target;
  }
}

#endif  // SCALEBENCH_HAVE_CUDA

// The decay of a burn: last quarter's median over the first quarter's.
TEST(Stress, DecayComparesTheLastQuarterWithTheFirst) {
  using scalebench::burn::decay;
  EXPECT_DOUBLE_EQ(decay({10, 10, 10, 10, 10, 10, 10, 10}), 1.0);
  EXPECT_DOUBLE_EQ(decay({10, 10, 9, 9, 8, 8, 5, 5}), 0.5);
  EXPECT_DOUBLE_EQ(decay({4}), 1.0);
  EXPECT_DOUBLE_EQ(decay({}), 1.0);
}

// Where a burn's SM clock started and where it settled: medians of the first and last quarter.
TEST(Stress, ClockHoldComparesWhereTheClockSettledWithWhereItStarted) {
  using scalebench::burn::clock_hold;
  const auto held = clock_hold({1980, 1980, 1755, 1755, 1755, 1755, 1755, 1755});
  EXPECT_DOUBLE_EQ(held.start_mhz, 1980);
  EXPECT_DOUBLE_EQ(held.sustained_mhz, 1755);
  EXPECT_NEAR(held.ratio(), 1755.0 / 1980, 1e-12);
  const auto fell = clock_hold({1700, 1700, 1600, 1500, 1400, 1300, 1000, 1000});
  EXPECT_DOUBLE_EQ(fell.ratio(), 1000.0 / 1700);
  EXPECT_DOUBLE_EQ(clock_hold({}).sustained_mhz, 0);  // no NVML: no clock, no record
  EXPECT_DOUBLE_EQ(clock_hold({}).ratio(), 1);
}
