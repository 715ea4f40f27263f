// GPU checks of the decoder's attention over the KV cache (decode_kernels.cuh) against a host
// computation in double: one block per (row, head), keys split over several blocks, and rows that
// bring their own key; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tests/unit/gpu_available.hpp"
#include "workloads/gpt/decode_kernels.cuh"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;

constexpr int kSlots = 3, kHeads = 4, kKvHeads = 2, kHd = 64, kMaxLen = 700;
constexpr int kQkv = (kHeads + 2 * kKvHeads) * kHd, kKv = kKvHeads * kHd;
const std::vector<int> kRowSlot{2, 0, 1}, kRowPos{5, 300, 699};

template <class T>
gpu::DeviceBuffer upload(const std::vector<T>& v) {
  gpu::DeviceBuffer b(sizeof(T) * v.size());
  CUDA_CHECK(cudaMemcpy(b.get(), v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return b;
}
template <class T>
std::vector<T> download(const gpu::DeviceBuffer& b, std::size_t n) {
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.get(), sizeof(T) * n, cudaMemcpyDeviceToHost));
  return v;
}
float f(bf16 x) { return __bfloat162float(x); }

struct Inputs {
  std::vector<bf16> qkv, k, v;
};

Inputs random_inputs(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  Inputs in;
  for (auto* t : {&in.qkv, &in.k, &in.v}) {
    t->resize(t == &in.qkv ? kRowSlot.size() * kQkv : static_cast<std::size_t>(kSlots) * kMaxLen * kKv);
    for (bf16& x : *t) x = __float2bfloat16(normal(rng));
  }
  return in;
}

// Row r's output in double; with `own`, the key and value at its position are its qkv row's.
std::vector<double> reference(const Inputs& in, bool own) {
  std::vector<double> y(kRowSlot.size() * kHeads * kHd, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHd));
  for (std::size_t r = 0; r < kRowSlot.size(); ++r)
    for (int h = 0; h < kHeads; ++h) {
      const int kvh = h / (kHeads / kKvHeads), n = kRowPos[r] + 1;
      auto key = [&](const std::vector<bf16>& cache, int j, int d, int part) {
        if (own && j == n - 1)
          return static_cast<double>(f(in.qkv[r * kQkv + kHeads * kHd + part * kKv + kvh * kHd + d]));
        return static_cast<double>(
            f(cache[(static_cast<std::size_t>(kRowSlot[r]) * kMaxLen + j) * kKv + kvh * kHd + d]));
      };
      std::vector<double> s(static_cast<std::size_t>(n));
      double top = -1e300, sum = 0;
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < kHd; ++d) dot += f(in.qkv[r * kQkv + h * kHd + d]) * key(in.k, j, d, 0);
        s[static_cast<std::size_t>(j)] = dot * scale;
        top = std::max(top, s[static_cast<std::size_t>(j)]);
      }
      for (double& x : s) sum += (x = std::exp(x - top));
      for (int d = 0; d < kHd; ++d) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += s[static_cast<std::size_t>(j)] * key(in.v, j, d, 1);
        y[(r * kHeads + h) * kHd + d] = acc / sum;
      }
    }
  return y;
}

struct Outputs {
  std::vector<bf16> y, k, v;
};

Outputs run(const Inputs& in, bool own, bool split, int launches) {
  gpu::DeviceBuffer qkv = upload(in.qkv), k = upload(in.k), v = upload(in.v), slot = upload(kRowSlot),
                    pos = upload(kRowPos), y(sizeof(bf16) * kRowSlot.size() * kHeads * kHd),
                    partial(sizeof(float) * attention_scratch_floats(kHd)), done(sizeof(int) * kAttentionSplitBelow);
  CUDA_CHECK(cudaMemset(done.get(), 0, sizeof(int) * kAttentionSplitBelow));
  AttentionScratch scratch;
  if (split) scratch = {reinterpret_cast<float*>(partial.get()), reinterpret_cast<int*>(done.get())};
  for (int i = 0; i < launches; ++i)
    cached_attention(reinterpret_cast<bf16*>(y.get()), reinterpret_cast<const bf16*>(qkv.get()),
                     reinterpret_cast<bf16*>(k.get()), reinterpret_cast<bf16*>(v.get()),
                     reinterpret_cast<const int*>(slot.get()), reinterpret_cast<const int*>(pos.get()),
                     static_cast<int>(kRowSlot.size()), kHeads, kKvHeads, kHd, kMaxLen,
                     1.f / std::sqrt(static_cast<float>(kHd)), own, scratch, nullptr);
  return {download<bf16>(y, kRowSlot.size() * kHeads * kHd), download<bf16>(k, in.k.size()),
          download<bf16>(v, in.v.size())};
}

double worst_error(const std::vector<bf16>& y, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(f(y[i]) - want[i]));
  return worst;
}
}  // namespace

// Three rows of 6, 301 and 700 keys: with one block per (row, head) and with the keys split over
// many blocks, the outputs are the double computation's within bf16's rounding; launched three
// times in a row, the split path gives the same bits (each launch leaves its counts at zero).
TEST(DecodeAttentionGpu, SplitAndWholeKeysMatchADoubleComputation) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  ASSERT_GT(attention_splits(3, kHeads, kMaxLen).splits, 8);
  const Inputs in = random_inputs(11);
  const std::vector<double> want = reference(in, false);
  const Outputs whole = run(in, false, false, 1), split = run(in, false, true, 1), again = run(in, false, true, 3);
  EXPECT_LT(worst_error(whole.y, want), 0.02);
  EXPECT_LT(worst_error(split.y, want), 0.02);
  EXPECT_EQ(0, std::memcmp(split.y.data(), again.y.data(), sizeof(bf16) * split.y.size()));
}

// The splits cover every key, stay within the scratch (kAttentionSplitBelow (row, head) pairs and
// at most 32 splits each) and are only made where a launch has few blocks; no GPU needed.
TEST(DecodeAttention, SplitsCoverEveryKeyWithinTheScratch) {
  for (const int rows : {1, 2, 7, 64, 200})
    for (const int heads : {4, 12, 25, 32})
      for (const int max_len : {2, 15, 384, 1024, 16384}) {
        SCOPED_TRACE(testing::Message() << rows << " rows, " << heads << " heads, " << max_len << " keys");
        const AttentionSplits a = attention_splits(rows, heads, max_len);
        EXPECT_GE(a.splits, 1);
        EXPECT_LE(a.splits, 32);
        EXPECT_GE(static_cast<long long>(a.splits) * a.chunk, max_len);
        if (rows * heads >= kAttentionSplitBelow) EXPECT_EQ(a.splits, 1);
        if (a.splits > 1)
          EXPECT_LE(static_cast<std::size_t>(rows) * heads * a.splits * (kHd + 2), attention_scratch_floats(kHd));
      }
}

// Rows bringing their own key: the cache at each row's position held other values, the output is
// computed with the row's key and value, and they are in the cache afterwards.
TEST(DecodeAttentionGpu, RowsBringingTheirOwnKeyUseItAndWriteItToTheCache) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const Inputs in = random_inputs(12);
  const std::vector<double> want = reference(in, true);
  for (const bool split : {false, true}) {
    SCOPED_TRACE(split ? "split" : "whole");
    const Outputs got = run(in, true, split, 1);
    EXPECT_LT(worst_error(got.y, want), 0.02);
    for (std::size_t r = 0; r < kRowSlot.size(); ++r)
      for (int c = 0; c < kKv; ++c) {
        const std::size_t at = (static_cast<std::size_t>(kRowSlot[r]) * kMaxLen + kRowPos[r]) * kKv + c;
        EXPECT_EQ(f(got.k[at]), f(in.qkv[r * kQkv + kHeads * kHd + c]));
        EXPECT_EQ(f(got.v[at]), f(in.qkv[r * kQkv + kHeads * kHd + kKv + c]));
      }
  }
}
#endif
