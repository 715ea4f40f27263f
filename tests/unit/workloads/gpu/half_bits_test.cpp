#include "workloads/gpu/half_bits.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace scalebench::gpu {
namespace {

// The values the checks read back: normal, negative, the largest, subnormal, zero's sign,
// infinities and NaN.
TEST(HalfBits, HalfDecodesEveryKindOfValue) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc100), -2.5f);
  EXPECT_EQ(half_to_float(0x6802), 2052.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x83ff), -std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
  EXPECT_EQ(half_to_float(0x7c00), INFINITY);
  EXPECT_EQ(half_to_float(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
}

TEST(HalfBits, Bf16IsTheTopHalfOfAFloat) {
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xc500), -2048.0f);
  EXPECT_EQ(bf16_to_float(0x7f80), INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7fc0)));
}

}  // namespace
}  // namespace scalebench::gpu
