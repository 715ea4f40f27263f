#include "workloads/gpu/quant_conv_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace scalebench::gpu {
namespace {

TEST(QuantConvReference, ChannelsMustComeInCudnnsVectors) {
  QuantConvShape s{1, 64, 56, 56, 256, 1, 1, 0, 1};
  EXPECT_EQ(s.invalid(QuantFormat::kInt8), "");
  EXPECT_EQ(s.invalid(QuantFormat::kE4M3), "");
  s.c = 3;  // ResNet-50's stem
  EXPECT_NE(s.invalid(QuantFormat::kInt8).find("multiples of 4"), std::string::npos) << s.invalid(QuantFormat::kInt8);
  s.c = 8;
  EXPECT_EQ(s.invalid(QuantFormat::kInt8), "");
  EXPECT_NE(s.invalid(QuantFormat::kE4M3).find("multiples of 16"), std::string::npos);
  s.c = 64;
  s.r = 70;
  EXPECT_NE(s.invalid(QuantFormat::kInt8).find("larger than the padded input"), std::string::npos);
}

TEST(QuantConvReference, OutputSizeFollowsPaddingAndStride) {
  const QuantConvShape s{2, 64, 56, 56, 64, 3, 3, 1, 2};
  EXPECT_EQ(s.p(), 28);
  EXPECT_EQ(s.q(), 28);
  EXPECT_EQ(s.text(), "64x64x3x3@56x56 s2 p1 n2");
}

// A 3x3 input of one channel, a 2x2 filter, padding 1, stride 2: each output sums the products
// that land inside the input (worked by hand), in int8 (0xff is -1) and in E4M3 (0x38 is 1).
TEST(QuantConvReference, SumsTheProductsInsideThePaddedInput) {
  const QuantConvShape s{1, 1, 3, 3, 1, 2, 2, 1, 2};
  // x = [1 2 3; 4 5 6; 7 8 9], w = [1 -1; 2 0]
  const std::vector<std::uint8_t> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 0xff, 2, 0};
  // Output (0,0) covers input rows -1..0, cols -1..0: only x[0][0] under w[1][1] = 0.
  EXPECT_EQ(reference_acc(s, QuantFormat::kInt8, x.data(), w.data(), 0, 0, 0, 0), 0.0);
  // (0,1): rows -1..0, cols 1..2: x[0][1] * w[1][0] + x[0][2] * w[1][1] = 2 * 2 + 0 = 4.
  EXPECT_EQ(reference_acc(s, QuantFormat::kInt8, x.data(), w.data(), 0, 0, 0, 1), 4.0);
  // (1,1): rows 1..2, cols 1..2: 5 * 1 + 6 * -1 + 8 * 2 + 9 * 0 = 15.
  EXPECT_EQ(reference_acc(s, QuantFormat::kInt8, x.data(), w.data(), 0, 0, 1, 1), 15.0);
  const std::vector<std::uint8_t> ones(9, 0x38), wf{0x38, 0xb8, 0x40, 0x00};  // w = [1 -1; 2 0]
  EXPECT_EQ(reference_acc(s, QuantFormat::kE4M3, ones.data(), wf.data(), 0, 0, 1, 1), 2.0);
}

// The comparison allows what each output format's rounding allows, and no more.
TEST(QuantConvReference, OutputsMatchWithinTheirFormatsRounding) {
  const QuantFormat i8 = QuantFormat::kInt8, e4 = QuantFormat::kE4M3;
  EXPECT_TRUE(output_matches(QuantOutput::kInt8, i8, 12, 12.4, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kInt8, i8, 13, 12.5, 30));  // a tie the fp32 epilogue may round up
  EXPECT_FALSE(output_matches(QuantOutput::kInt8, i8, 14, 12.4, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kInt8, i8, 127, 300, 30));  // saturated
  EXPECT_FALSE(output_matches(QuantOutput::kInt8, i8, -128, 300, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kE4M3, i8, 104, 100, 30));  // steps of 8 above 64
  EXPECT_FALSE(output_matches(QuantOutput::kE4M3, i8, 112, 100, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kE4M3, i8, 448, 1000, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kFp16, i8, 100.1, 100, 30));
  EXPECT_FALSE(output_matches(QuantOutput::kFp16, i8, 101, 100, 30));
  EXPECT_FALSE(output_matches(QuantOutput::kFp32, i8, 100.1, 100, 30));
  EXPECT_TRUE(output_matches(QuantOutput::kFp32, e4, 100.05, 100, 30));  // FP8's shorter sums
  EXPECT_FALSE(output_matches(QuantOutput::kFp32, i8, NAN, 100, 30));
}

TEST(QuantConvReference, DecodesEveryOutputFormat) {
  const std::uint8_t i8[] = {0xfe}, e4[] = {0x00, 0x40};
  const std::uint16_t h[] = {0x3c00, 0xc100};
  const float f[] = {0.5f, -7.25f};
  EXPECT_EQ(decode_output(QuantOutput::kInt8, i8, 0), -2.0);
  EXPECT_EQ(decode_output(QuantOutput::kE4M3, e4, 1), 2.0);
  EXPECT_EQ(decode_output(QuantOutput::kFp16, h, 1), -2.5);
  EXPECT_EQ(decode_output(QuantOutput::kFp32, f, 1), -7.25);
}

}  // namespace
}  // namespace scalebench::gpu
