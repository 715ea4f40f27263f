// GPU checks of the decoder's attention over the KV cache (decode_kernels.cuh) against a host
// computation in double: one block per (row, head), keys split over several blocks, and rows that
// bring their own key, at head widths that use every lane of a key's group and some that leave
// lanes idle; skipped where no GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr int kSlots = 3, kMaxLen = 700;
const std::vector<int> kRowSlot{2, 0, 1}, kRowPos{5, 300, 699};

// Query heads over KV heads, and the head width.
struct Heads {
  int heads, kv_heads, hd;
  int q_width() const { return heads * hd; }
  int kv() const { return kv_heads * hd; }
  int qkv() const { return q_width() + 2 * kv(); }
};

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

Inputs random_inputs(const Heads& a, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  Inputs in;
  for (auto* t : {&in.qkv, &in.k, &in.v}) {
    t->resize(t == &in.qkv ? kRowSlot.size() * a.qkv() : static_cast<std::size_t>(kSlots) * kMaxLen * a.kv());
    for (bf16& x : *t) x = __float2bfloat16(normal(rng));
  }
  return in;
}

// Each row's output in double; with `own`, the key and value at its position are its qkv row's.
std::vector<double> reference(const Heads& a, const Inputs& in, bool own) {
  std::vector<double> y(kRowSlot.size() * a.q_width(), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.hd));
  for (std::size_t r = 0; r < kRowSlot.size(); ++r)
    for (int h = 0; h < a.heads; ++h) {
      const int kvh = h / (a.heads / a.kv_heads), n = kRowPos[r] + 1;
      auto key = [&](const std::vector<bf16>& cache, int j, int d, int part) {
        if (own && j == n - 1)
          return static_cast<double>(f(in.qkv[r * a.qkv() + a.q_width() + part * a.kv() + kvh * a.hd + d]));
        return static_cast<double>(
            f(cache[(static_cast<std::size_t>(kRowSlot[r]) * kMaxLen + j) * a.kv() + kvh * a.hd + d]));
      };
      std::vector<double> s(static_cast<std::size_t>(n));
      double top = -1e300, sum = 0;
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < a.hd; ++d) dot += f(in.qkv[r * a.qkv() + h * a.hd + d]) * key(in.k, j, d, 0);
        s[static_cast<std::size_t>(j)] = dot * scale;
        top = std::max(top, s[static_cast<std::size_t>(j)]);
      }
      for (double& x : s) sum += (x = std::exp(x - top));
      for (int d = 0; d < a.hd; ++d) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += s[static_cast<std::size_t>(j)] * key(in.v, j, d, 1);
        y[r * a.q_width() + h * a.hd + d] = acc / sum;
      }
    }
  return y;
}

struct Outputs {
  std::vector<bf16> y, k, v;
  std::vector<int> done;  // the split path's counts after the last launch
};

// `launches` launches; before the last, y is filled with NaNs, so that a launch that wrote
// nothing (a count not set back to zero: no block finds itself last) cannot pass for one that did.
Outputs run(const Heads& a, const Inputs& in, bool own, bool split, int launches) {
  gpu::DeviceBuffer qkv = upload(in.qkv), k = upload(in.k), v = upload(in.v), slot = upload(kRowSlot),
                    pos = upload(kRowPos), y(sizeof(bf16) * kRowSlot.size() * a.q_width()),
                    partial(sizeof(float) * attention_scratch_floats(a.hd)), done(sizeof(int) * kAttentionSplitBelow);
  CUDA_CHECK(cudaMemset(done.get(), 0, sizeof(int) * kAttentionSplitBelow));
  AttentionScratch scratch;
  if (split) scratch = {reinterpret_cast<float*>(partial.get()), reinterpret_cast<int*>(done.get())};
  for (int i = 0; i < launches; ++i) {
    if (i == launches - 1) CUDA_CHECK(cudaMemset(y.get(), 0xff, y.bytes()));
    cached_attention(reinterpret_cast<bf16*>(y.get()), reinterpret_cast<const bf16*>(qkv.get()),
                     reinterpret_cast<bf16*>(k.get()), reinterpret_cast<bf16*>(v.get()),
                     reinterpret_cast<const int*>(slot.get()), reinterpret_cast<const int*>(pos.get()),
                     static_cast<int>(kRowSlot.size()), a.heads, a.kv_heads, a.hd, kMaxLen,
                     1.f / std::sqrt(static_cast<float>(a.hd)), own, scratch, nullptr);
  }
  return {download<bf16>(y, kRowSlot.size() * a.q_width()), download<bf16>(k, in.k.size()),
          download<bf16>(v, in.v.size()), download<int>(done, kAttentionSplitBelow)};
}

double worst_error(const std::vector<bf16>& y, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = std::abs(f(y[i]) - want[i]);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

// Widths of 16 (2 lanes a key), 24 (4 lanes, one idle), 64 (8), 80 (16 lanes, 6 idle) and 128 (16).
const std::vector<Heads> kShapes{{4, 2, 16}, {6, 3, 24}, {4, 2, 64}, {4, 1, 80}, {8, 2, 128}};
}  // namespace

// Three rows of 6, 301 and 700 keys: with one block per (row, head) and with the keys split over
// many blocks, the outputs are the double computation's within bf16's rounding; launched three
// times in a row, the split path gives the same bits each time and leaves its counts at zero.
TEST(DecodeAttentionGpu, SplitAndWholeKeysMatchADoubleComputation) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (const Heads& a : kShapes) {
    SCOPED_TRACE(testing::Message() << a.heads << " heads over " << a.kv_heads << ", width " << a.hd);
    ASSERT_GT(attention_splits(3, a.heads, kMaxLen).splits, 8);
    const Inputs in = random_inputs(a, 11);
    const std::vector<double> want = reference(a, in, false);
    const Outputs whole = run(a, in, false, false, 1), split = run(a, in, false, true, 1),
                  again = run(a, in, false, true, 3);
    EXPECT_LT(worst_error(whole.y, want), 0.02);
    EXPECT_LT(worst_error(split.y, want), 0.02);
    EXPECT_EQ(0, std::memcmp(split.y.data(), again.y.data(), sizeof(bf16) * split.y.size()));
    EXPECT_EQ(std::count(again.done.begin(), again.done.end(), 0), kAttentionSplitBelow);
  }
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
        // A row of n <= max_len keys shares them over the splits: every key taken, and no share
        // larger than the chunk that the shared memory is sized for, whatever a block's stride.
        for (const int stride : {16, 32, 64, 128, 512})
          for (int n = 1; n <= max_len; n += std::max(1, max_len / 97)) {
            const int share = split_share(n, a.splits, a.chunk, stride);
            ASSERT_LE(share, a.chunk) << n << " keys, stride " << stride;
            ASSERT_GE(static_cast<long long>(share) * a.splits, n) << n << " keys, stride " << stride;
            if (a.chunk >= stride) {
              ASSERT_GE(share, std::min(stride, n)) << n << " keys: a pass's worth";
            }
          }
        if (rows * heads >= kAttentionSplitBelow) {
          EXPECT_EQ(a.splits, 1);
        }
        if (a.splits > 1) {
          EXPECT_LE(static_cast<std::size_t>(rows) * heads * a.splits * (128 + 2), attention_scratch_floats(128));
        }
      }
}

// Rows bringing their own key: the cache at each row's position held other values, the output is
// computed with the row's key and value, and they are in the cache afterwards.
TEST(DecodeAttentionGpu, RowsBringingTheirOwnKeyUseItAndWriteItToTheCache) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (const Heads& a : kShapes) {
    const Inputs in = random_inputs(a, 12);
    const std::vector<double> want = reference(a, in, true);
    for (const bool split : {false, true}) {
      SCOPED_TRACE(testing::Message() << a.heads << " heads over " << a.kv_heads << ", width " << a.hd
                                      << (split ? ", split" : ", whole"));
      const Outputs got = run(a, in, true, split, 1);
      EXPECT_LT(worst_error(got.y, want), 0.02);
      for (std::size_t r = 0; r < kRowSlot.size(); ++r)
        for (int c = 0; c < a.kv(); ++c) {
          const std::size_t at = (static_cast<std::size_t>(kRowSlot[r]) * kMaxLen + kRowPos[r]) * a.kv() + c;
          EXPECT_EQ(f(got.k[at]), f(in.qkv[r * a.qkv() + a.q_width() + c]));
          EXPECT_EQ(f(got.v[at]), f(in.qkv[r * a.qkv() + a.q_width() + a.kv() + c]));
        }
    }
  }
}
#endif
