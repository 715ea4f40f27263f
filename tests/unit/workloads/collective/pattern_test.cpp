#include "workloads/collective/pattern.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace scalebench::collective {
namespace {

const std::vector<DType> kAllDTypes{DType::kF32, DType::kF64, DType::kF16, DType::kBf16,
                                    DType::kI32, DType::kI64, DType::kI8,  DType::kU8};
const std::vector<Op> kAllOps{Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                              Op::kReduce,    Op::kAllToAll,  Op::kSendRecv};

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF64 || t == DType::kF16 || t == DType::kBf16; }

std::string name(DType t) { return gpu::dtype_name(t); }

std::uint16_t bits16(DType t, double v) {
  std::vector<std::byte> buf(2);
  encode(t, v, buf.data(), 0);
  std::uint16_t b;
  std::memcpy(&b, buf.data(), 2);
  return b;
}

double round_trip(DType t, double v) {
  std::vector<std::byte> buf(static_cast<std::size_t>(gpu::dtype_bytes(t)));
  encode(t, v, buf.data(), 0);
  return decode(t, buf.data(), 0);
}

// ---- encode / decode ----------------------------------------------------------------------------

TEST(Encode, HalfPrecisionBitPatterns) {
  EXPECT_EQ(bits16(DType::kF16, 1.0), 0x3c00);
  EXPECT_EQ(bits16(DType::kF16, 2.0), 0x4000);
  EXPECT_EQ(bits16(DType::kF16, -2.5), 0xc100);
  EXPECT_EQ(bits16(DType::kF16, 2048.0), 0x6800);
  EXPECT_EQ(bits16(DType::kF16, 0.0), 0x0000);
  EXPECT_EQ(bits16(DType::kF16, 65504.0), 0x7bff) << "largest finite half";
  EXPECT_EQ(bits16(DType::kF16, 1e6), 0x7c00) << "overflow is infinity";
}

TEST(Encode, BFloat16BitPatterns) {
  EXPECT_EQ(bits16(DType::kBf16, 1.0), 0x3f80);
  EXPECT_EQ(bits16(DType::kBf16, 2.0), 0x4000);
  EXPECT_EQ(bits16(DType::kBf16, -2.5), 0xc020);
  EXPECT_EQ(bits16(DType::kBf16, 256.0), 0x4380);
  EXPECT_EQ(bits16(DType::kBf16, 0.0), 0x0000);
}

TEST(Encode, HalfTypesRoundToNearestEven) {
  // float16 has 11 significant bits: between 2048 and 4096 the step is 2.
  EXPECT_EQ(round_trip(DType::kF16, 2049), 2048);
  EXPECT_EQ(round_trip(DType::kF16, 2051), 2052);
  EXPECT_EQ(round_trip(DType::kF16, 2050.5), 2050);
  // bfloat16 has 8 significant bits: between 256 and 512 the step is 2.
  EXPECT_EQ(round_trip(DType::kBf16, 257), 256);
  EXPECT_EQ(round_trip(DType::kBf16, 259), 260);
  EXPECT_EQ(round_trip(DType::kBf16, 257.5), 258);
}

TEST(Encode, EveryDTypeHoldsSmallIntegersExactly) {
  for (DType t : kAllDTypes) {
    const int hi = t == DType::kI8 ? 127 : 255;
    for (int v = 0; v <= hi; ++v) EXPECT_EQ(round_trip(t, v), v) << name(t) << " " << v;
    if (t != DType::kU8) {
      for (int v = -1; v >= -100; --v) EXPECT_EQ(round_trip(t, v), v) << name(t) << " " << v;
    }
  }
}

TEST(Encode, HalfTypesRoundTripTheirFullExactRange) {
  for (int v = -2048; v <= 2048; ++v) EXPECT_EQ(round_trip(DType::kF16, v), v) << v;
  for (int v = -256; v <= 256; ++v) EXPECT_EQ(round_trip(DType::kBf16, v), v) << v;
  for (double v : {0.5, 0.25, -0.75, 1.5, 3.375}) {
    EXPECT_EQ(round_trip(DType::kF16, v), v);
    EXPECT_EQ(round_trip(DType::kBf16, v), v);
  }
}

TEST(Encode, WritesTheIthElementOnly) {
  for (DType t : kAllDTypes) {
    const std::size_t sz = static_cast<std::size_t>(gpu::dtype_bytes(t));
    std::vector<std::byte> buf(4 * sz, std::byte{0});
    encode(t, 7, buf.data(), 2);
    EXPECT_EQ(decode(t, buf.data(), 0), 0) << name(t);
    EXPECT_EQ(decode(t, buf.data(), 1), 0) << name(t);
    EXPECT_EQ(decode(t, buf.data(), 2), 7) << name(t);
    EXPECT_EQ(decode(t, buf.data(), 3), 0) << name(t);
  }
}

// ---- the input pattern --------------------------------------------------------------------------

TEST(InputValue, SmallPositiveIntegersThatVaryByRankAndIndex) {
  for (DType t : kAllDTypes)
    for (int n : {1, 2, 4, 8}) {
      for (int r = 0; r < n; ++r)
        for (std::size_t i = 0; i < 64; ++i) {
          double v = input_value(t, RedOp::kSum, n, r, i);
          EXPECT_GE(v, 1);
          EXPECT_LE(v, 13);
          EXPECT_EQ(v, std::floor(v));
        }
      if (n > 1) {
        EXPECT_NE(input_value(t, RedOp::kSum, n, 0, 0), input_value(t, RedOp::kSum, n, 1, 0)) << name(t);
      }
      EXPECT_NE(input_value(t, RedOp::kSum, n, 0, 0), input_value(t, RedOp::kSum, n, 0, 1)) << name(t);
    }
}

TEST(InputValue, ProductInputsAreOnesAndTwos) {
  for (int n : {1, 2, 4, 8})
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < 16; ++i) {
        double v = input_value(DType::kI8, RedOp::kProd, n, r, i);
        EXPECT_TRUE(v == 1 || v == 2) << v;
      }
}

TEST(MakeInput, EncodesInputValueForEveryElement) {
  for (DType t : kAllDTypes) {
    Config c;
    c.dtype = t;
    Layout l = layout_for(Op::kAllReduce, 256, t, 4);
    auto buf = make_input(c, l, 4, 3);
    ASSERT_EQ(buf.size(), l.send_count * static_cast<std::size_t>(gpu::dtype_bytes(t)));
    for (std::size_t i = 0; i < l.send_count; ++i)
      EXPECT_EQ(decode(t, buf.data(), i), input_value(t, c.redop, 4, 3, i)) << name(t) << " " << i;
  }
}

// ---- expected outputs ---------------------------------------------------------------------------

// What a correct collective leaves in `rank`'s output, computed here from every rank's input
// buffer the way the operation is defined, accumulating in the element type.
std::vector<std::byte> simulate(const Config& c, const Layout& l, int n, int rank) {
  std::vector<std::vector<std::byte>> in;
  for (int r = 0; r < n; ++r) in.push_back(make_input(c, l, n, r));
  auto at = [&](int r, std::size_t i) { return decode(c.dtype, in[static_cast<std::size_t>(r)].data(), i); };
  auto reduce = [&](std::size_t i) {
    double acc = at(0, i);
    for (int r = 1; r < n; ++r) {
      double v = at(r, i);
      switch (c.redop) {
        case RedOp::kSum:
        case RedOp::kAvg:
          acc += v;
          break;
        case RedOp::kProd:
          acc *= v;
          break;
        case RedOp::kMax:
          acc = std::max(acc, v);
          break;
        case RedOp::kMin:
          acc = std::min(acc, v);
          break;
      }
    }
    return c.redop == RedOp::kAvg ? acc / n : acc;
  };
  const std::size_t chunk = l.chunk;
  std::vector<std::byte> out(l.recv_count * static_cast<std::size_t>(gpu::dtype_bytes(c.dtype)), std::byte{0});
  for (std::size_t j = 0; j < l.recv_count; ++j) {
    double v = 0;
    switch (c.op) {
      case Op::kAllReduce:
        v = reduce(j);
        break;
      case Op::kReduce:
        v = rank == c.root ? reduce(j) : 0;
        break;
      case Op::kBroadcast:
        v = at(c.root, j);
        break;
      case Op::kAllGather:
        v = at(static_cast<int>(j / chunk), j % chunk);
        break;
      case Op::kReduceScatter:
        v = reduce(static_cast<std::size_t>(rank) * chunk + j);
        break;
      case Op::kAllToAll:
        v = at(static_cast<int>(j / chunk), static_cast<std::size_t>(rank) * chunk + j % chunk);
        break;
      case Op::kSendRecv:
        v = at((rank + n - 1) % n, j);
        break;
    }
    encode(c.dtype, v, out.data(), j);
  }
  return out;
}

std::vector<RedOp> redops_for(DType t) {
  std::vector<RedOp> r{RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin};
  if (is_float(t)) r.push_back(RedOp::kAvg);
  return r;
}

TEST(ExpectedOutput, ExactlyRepresentableForEveryDTypeOpAndReduction) {
  for (DType t : kAllDTypes)
    for (Op op : kAllOps)
      for (RedOp red : redops_for(t))
        for (int n : {1, 2, 4, 8}) {
          if (red == RedOp::kAvg) continue;  // avg divides: checked with a tolerance below
          Config c;
          c.op = op;
          c.dtype = t;
          c.redop = red;
          Layout l = layout_for(op, 512, t, n);
          for (int rank = 0; rank < n; ++rank)
            for (std::size_t j = 0; j < l.recv_count; ++j) {
              auto want = expected_output(c, l, n, rank, j);
              if (!want) continue;
              ASSERT_EQ(*want, std::floor(*want));
              ASSERT_EQ(round_trip(t, *want), *want) << name(t) << " n=" << n << " j=" << j;
            }
        }
}

TEST(ExpectedOutput, StaysRepresentableOnManyRanks) {
  for (DType t : kAllDTypes)
    for (RedOp red : {RedOp::kSum, RedOp::kProd})
      for (int n : {16, 32, 64, 128}) {
        Config c;
        c.dtype = t;
        c.redop = red;
        Layout l = layout_for(Op::kAllReduce, 4096, t, n);
        for (std::size_t j = 0; j < l.recv_count; ++j) {
          double want = *expected_output(c, l, n, 0, j);
          ASSERT_EQ(round_trip(t, want), want) << name(t) << " redop " << static_cast<int>(red) << " n=" << n;
        }
      }
}

TEST(CountWrong, ACorrectOutputHasNoWrongElements) {
  for (DType t : kAllDTypes)
    for (Op op : kAllOps)
      for (RedOp red : redops_for(t))
        for (int n : {1, 2, 4, 8}) {
          Config c;
          c.op = op;
          c.dtype = t;
          c.redop = red;
          c.root = n - 1;
          Layout l = layout_for(op, 1024, t, n);
          ASSERT_GT(l.recv_count, 0u);
          for (int rank = 0; rank < n; ++rank)
            EXPECT_EQ(count_wrong(c, l, n, rank, simulate(c, l, n, rank)), 0u)
                << name(t) << " op " << static_cast<int>(op) << " redop " << static_cast<int>(red) << " n=" << n
                << " rank " << rank;
        }
}

TEST(CountWrong, DetectsOneCorruptedElement) {
  for (DType t : kAllDTypes)
    for (Op op : kAllOps)
      for (int n : {2, 4, 8}) {
        Config c;
        c.op = op;
        c.dtype = t;
        Layout l = layout_for(op, 1024, t, n);
        const int rank = op == Op::kReduce ? c.root : 1;
        auto out = simulate(c, l, n, rank);
        const std::size_t j = l.recv_count / 2;
        encode(t, decode(t, out.data(), j) + 1, out.data(), j);
        EXPECT_EQ(count_wrong(c, l, n, rank, out), 1u) << name(t) << " op " << static_cast<int>(op) << " n=" << n;
      }
}

TEST(CountWrong, OneStepOffIsWrongExceptForAvg) {
  // Adding 1 to the raw bits of a positive element gives the next representable value of its type.
  for (DType t : kAllDTypes) {
    Config c;
    c.dtype = t;
    Layout l = layout_for(Op::kAllReduce, 1024, t, 8);
    auto out = simulate(c, l, 8, 0);
    const std::size_t sz = static_cast<std::size_t>(gpu::dtype_bytes(t)), j = 3;
    std::uint64_t raw = 0;
    std::memcpy(&raw, out.data() + j * sz, sz);
    ++raw;
    std::memcpy(out.data() + j * sz, &raw, sz);
    EXPECT_EQ(count_wrong(c, l, 8, 0, out), 1u) << name(t) << ": results without avg are exact";
  }
}

TEST(CountWrong, CountsEveryWrongElement) {
  Config c;
  c.dtype = DType::kF32;
  Layout l = layout_for(Op::kAllReduce, 4096, c.dtype, 4);
  std::vector<std::byte> zeros(l.recv_count * 4, std::byte{0});
  EXPECT_EQ(count_wrong(c, l, 4, 0, zeros), l.recv_count);
}

TEST(CountWrong, DetectsDataFromTheWrongPeer) {
  // An all_gather whose first two chunks arrived swapped.
  Config c;
  c.op = Op::kAllGather;
  c.dtype = DType::kI32;
  Layout l = layout_for(c.op, 1024, c.dtype, 4);
  auto out = simulate(c, l, 4, 0);
  std::swap_ranges(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(l.chunk * 4),
                   out.begin() + static_cast<std::ptrdiff_t>(l.chunk * 4));
  EXPECT_GT(count_wrong(c, l, 4, 0, out), 0u);
}

TEST(CountWrong, NonRootRanksOfReduceAreNotChecked) {
  Config c;
  c.op = Op::kReduce;
  c.root = 0;
  Layout l = layout_for(c.op, 1024, c.dtype, 4);
  std::vector<std::byte> garbage(l.recv_count * 4, std::byte{0x7f});
  EXPECT_FALSE(expected_output(c, l, 4, 1, 0));
  EXPECT_EQ(count_wrong(c, l, 4, 1, garbage), 0u);
  EXPECT_EQ(count_wrong(c, l, 4, 0, garbage), l.recv_count);
}

TEST(CountWrong, AvgToleratesRoundingOfItsTypeOnly) {
  for (DType t : {DType::kF16, DType::kBf16, DType::kF32}) {
    Config c;
    c.dtype = t;
    c.redop = RedOp::kAvg;
    Layout l = layout_for(Op::kAllReduce, 1024, t, 3);
    auto out = simulate(c, l, 3, 0);
    EXPECT_EQ(count_wrong(c, l, 3, 0, out), 0u) << name(t);
    encode(t, decode(t, out.data(), 5) * 1.1, out.data(), 5);
    EXPECT_EQ(count_wrong(c, l, 3, 0, out), 1u) << name(t) << ": 10% off is wrong";
  }
}

}  // namespace
}  // namespace scalebench::collective
